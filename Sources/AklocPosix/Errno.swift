import CPosix
import Glibc

/// A failed system call's `errno`, with its symbolic name ("ENOENT") as the
/// stable code and the C library's description as the human message.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The calling thread's current `errno`.
    public static var current: Errno { Errno(rawValue: errno) }

    /// The symbolic name, e.g. "ENOENT"; "E<number>" for values glibc does not know.
    public var name: String {
        guard let name = strerrorname_np(rawValue) else { return "E\(rawValue)" }
        return String(cString: name)
    }

    /// The C library's description, e.g. "No such file or directory".
    public var message: String {
        guard let text = strerrordesc_np(rawValue) else { return "Unknown error \(rawValue)" }
        return String(cString: text)
    }

    public var description: String { "\(name): \(message)" }

    public static let interrupted = Errno(rawValue: EINTR)
    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let fileExists = Errno(rawValue: EEXIST)
    public static let brokenPipe = Errno(rawValue: EPIPE)
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
}
