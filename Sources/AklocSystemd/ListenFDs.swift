import AklocCore
import AklocPosix
import CSystemd
import Glibc

/// Socket activation (sd_listen_fds(3)): the descriptors systemd passed in.
///
/// aklocd expects exactly one: the Unix stream socket of `akloc.socket`.
/// Anything else is a unit misconfiguration, reported with a typed error so
/// the daemon can refuse to start with a clear reason instead of serving on
/// the wrong thing.
public enum ListenFDs {
    /// `SD_LISTEN_FDS_START`: the first passed descriptor.
    public static let firstDescriptor: Int32 = 3

    /// The passed descriptors, empty when the process was not socket-activated.
    /// Unsets `LISTEN_PID`/`LISTEN_FDS`/`LISTEN_FDNAMES` so children started
    /// later do not mistake them for their own, and marks the descriptors
    /// close-on-exec.
    public static func activated() throws(ListenFDsError) -> [Int32] {
        let count: Int32
        do {
            count = try Syscall.retryingNegativeErrnoOnEINTR { sd_listen_fds(1) }
        } catch {
            throw ListenFDsError(.environment, "sd_listen_fds failed: \(error)")
        }
        return (0..<count).map { firstDescriptor + $0 }
    }

    /// The activated listening socket, or nil when not socket-activated.
    public static func unixStreamListener() throws(ListenFDsError) -> Int32? {
        try unixStreamListener(from: activated())
    }

    /// The one descriptor of `descriptors`, checked; nil for none.
    static func unixStreamListener(from descriptors: [Int32]) throws(ListenFDsError) -> Int32? {
        guard let first = descriptors.first else { return nil }
        guard descriptors.count == 1 else {
            throw ListenFDsError(
                .tooManyDescriptors,
                "expected one socket from systemd, got \(descriptors.count) (descriptors \(descriptors)): "
                    + "akloc.socket must have a single ListenStream=")
        }
        try checkUnixStreamListener(first)
        return first
    }

    /// Throws unless `fd` is a listening `AF_UNIX` `SOCK_STREAM` socket.
    public static func checkUnixStreamListener(_ fd: Int32) throws(ListenFDsError) {
        let result: Int32
        do {
            result = try Syscall.retryingNegativeErrnoOnEINTR {
                sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0)
            }
        } catch {
            throw ListenFDsError(.badDescriptor, "descriptor \(fd) cannot be inspected: \(error)")
        }
        guard result == 0 else { return }
        throw ListenFDsError(
            .notUnixStreamListener,
            "descriptor \(fd) is not a listening Unix stream socket: "
                + "akloc.socket must use ListenStream= with a path")
    }
}

/// Why the activated descriptors cannot be served; a failed call's errno is in the message.
public typealias ListenFDsError = CodedError<ListenFDsErrorCode>

/// The stable codes of `ListenFDsError`.
public enum ListenFDsErrorCode: String, CodedErrorCode {
    /// `LISTEN_FDS`/`LISTEN_PID` are malformed or a descriptor is invalid.
    case environment
    /// More than one descriptor was passed.
    case tooManyDescriptors
    /// The descriptor could not be inspected (e.g. it is not open).
    case badDescriptor
    /// A socket, but not a listening `AF_UNIX` `SOCK_STREAM` one.
    case notUnixStreamListener
}
