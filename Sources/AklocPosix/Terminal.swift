import Glibc

/// What a full-screen view needs of the terminal on a descriptor: whether
/// it is one, its size, and a restore that is safe in a signal handler.
public enum Terminal {
    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// Columns and rows (`TIOCGWINSZ`); nil when `fd` is not a terminal or
    /// reports no size (a pipe, a terminal of unknown size).
    public static func size(_ fd: Int32) -> (columns: Int, rows: Int)? {
        var size = winsize()
        guard (try? Syscall.retryingOnEINTR({ ioctl(fd, UInt(TIOCGWINSZ), &size) })) != nil,
            size.ws_col > 0, size.ws_row > 0
        else { return nil }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// Writes a literal to `fd` with one write(2), which is async-signal-safe:
    /// a StaticString's bytes are in the binary, so nothing is allocated.
    public static func writeLiteral(_ text: StaticString, to fd: Int32) {
        _ = write(fd, text.utf8Start, text.utf8CodeUnitCount)
    }
}
