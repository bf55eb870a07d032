import AklocCore

/// The state directory or file cannot be used at all; the daemon reports it
/// and exits (a state it cannot save would silently forget pause and
/// authorization decisions).
public struct StateStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, CodedErrorCode {
        case directoryUnavailable
        case unreadable
        case writeFailed
        case moveAsideFailed
    }

    public var code: Code
    public var path: String
    public var message: String
    public var errno: Errno?

    public init(_ code: Code, path: String, _ message: String, errno: Errno? = nil) {
        self.code = code
        self.path = path
        self.message = message
        self.errno = errno
    }

    /// As every `CodedError` prints: `path: message [code]`.
    public var description: String {
        CodedError(code, message.hasPrefix(path) ? message : "\(path): \(message)").description
    }
}
