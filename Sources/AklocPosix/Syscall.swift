import Glibc

/// The one place system calls are retried on `EINTR` and turned into typed
/// errors. A signal can interrupt almost any blocking call; handling that at
/// each call site is how such bugs survive review.
public enum Syscall {
    /// Runs a call that reports failure as `-1` plus `errno` (open, read,
    /// write, fsync, ...), retrying while it fails with `EINTR`.
    @discardableResult
    public static func retryingOnEINTR<Result: FixedWidthInteger & SignedInteger>(
        _ body: () -> Result
    ) throws(Errno) -> Result {
        while true {
            let result = body()
            let error = errno
            guard result == -1 else { return result }
            if error == EINTR { continue }
            throw Errno(rawValue: error)
        }
    }

    /// Runs a libsystemd-style call that returns `-errno` on failure,
    /// retrying while it fails with `-EINTR`. Non-negative results pass
    /// through. A separate name, not an overload: with a trailing closure an
    /// overload would silently win over the generic `-1`/errno variant.
    @discardableResult
    public static func retryingNegativeErrnoOnEINTR(_ body: () -> Int32) throws(Errno) -> Int32 {
        while true {
            let result = body()
            guard result < 0 else { return result }
            if result == -EINTR { continue }
            throw Errno(rawValue: -result)
        }
    }

    /// Writes all of `bytes`, continuing after short writes.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            let written = try retryingOnEINTR {
                write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            }
            offset += written
        }
    }

    /// Writes all of `bytes`, continuing after short writes.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            let written = try retryingOnEINTR {
                bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            }
            offset += written
        }
    }

    /// Closes `fd` once. `close` is deliberately not retried: on Linux the
    /// descriptor is gone even when it reports `EINTR`, and a retry could
    /// close a descriptor another thread just opened.
    public static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }
}
