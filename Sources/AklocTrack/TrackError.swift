/// Why a track request failed: a stable code, and a message for people.
public struct TrackError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The `after` cursor names a file that is gone or was rewritten.
        case badCursor
        /// The journal could not be read or changed (an I/O error).
        case storageFailed
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(message) [\(code.rawValue)]" }
}
