import AklocPosix
import AklocProtocol
import Glibc

/// Unbuffered writes to stdout and stderr: each line is one `write(2)`, so
/// `watch` output reaches a pipe at once. A closed stdout (EPIPE, e.g.
/// `akloc watch | head -1`) ends the program quietly with status 0.
enum Output {
    static func line(_ text: String, newline: Bool = true) {
        var bytes = Array(text.utf8)
        if newline { bytes.append(0x0A) }
        write(bytes, to: 1)
    }

    static func line(bytes: [UInt8]) {
        var bytes = bytes
        bytes.append(0x0A)
        write(bytes, to: 1)
    }

    static func error(_ text: String) {
        var bytes = Array(text.utf8)
        if bytes.last != 0x0A { bytes.append(0x0A) }
        write(bytes, to: 2)
    }

    private static func write(_ bytes: [UInt8], to fd: Int32) {
        do {
            try Syscall.writeAll(fd, bytes)
        } catch  where error == .brokenPipe {
            exit(ExitCode.ok)
        } catch {
            // stdout gone some other way: nothing sensible to report it on
        }
    }
}
