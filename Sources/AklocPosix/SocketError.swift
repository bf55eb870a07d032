/// A failed socket call: a stable `code`, the errno, and a message for people.
public struct SocketError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case socket, bind, listen, accept, connect, read, write, peerCredentials, option
        case invalidAddress, addressInUse
    }

    public var code: Code
    /// The socket's address, when the call had one.
    public var path: String?
    public var errno: Int32
    /// Set for `invalidAddress`: what is wrong with the name.
    public var invalidAddress: UnixSocketAddress.InvalidAddress?

    public init(_ code: Code, path: String?, errno: Int32) {
        self.code = code
        self.path = path
        self.errno = errno
    }

    public init(_ code: Code, path: String?, _ errno: Errno) {
        self.init(code, path: path, errno: errno.rawValue)
    }

    public init(_ invalid: UnixSocketAddress.InvalidAddress) {
        self.init(.invalidAddress, path: invalid.text, invalid.errno)
        invalidAddress = invalid
    }

    public var error: Errno { Errno(rawValue: errno) }

    /// The peer closed its end (EPIPE, ECONNRESET): it left, nothing failed.
    public var isPeerGone: Bool { error == .brokenPipe || error == .connectionReset }

    public var description: String {
        if let invalidAddress { return invalidAddress.description }
        let reason = code == .addressInUse ? "another daemon is serving it" : "\(error.message) (\(error.name))"
        return "\(code.rawValue)\(path.map { " \($0)" } ?? ""): \(reason)"
    }
}
