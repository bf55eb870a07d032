/// A state file was unusable and has been moved aside; the daemon logs this
/// once as a warning and runs with a clean state.
public struct StateStoreWarning: Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable {
        /// Not JSON, truncated, empty, or fields of the wrong type.
        case corrupt
        /// Written by a newer (or unknown) aklocd.
        case unsupportedVersion
    }

    public var code: Code
    /// Where the bad file now is.
    public var movedTo: String
    public var message: String

    public init(code: Code, movedTo: String, message: String) {
        self.code = code
        self.movedTo = movedTo
        self.message = message
    }

    public var description: String { message }
}
