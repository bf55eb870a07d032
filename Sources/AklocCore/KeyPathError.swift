/// Why a key path string was rejected. The code is the wire's `unknownKeyPath`.
public struct KeyPathError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable {
        case unknownKeyPath
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The only code there is today.
    public init(_ message: String) {
        self.init(.unknownKeyPath, message)
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
