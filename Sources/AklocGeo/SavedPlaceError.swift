/// Why a saved place was refused; the daemon sends it as `badRequest`
/// naming `field`. Codes are stable; messages are for people.
public struct SavedPlaceError: Swift.Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case emptyName, nameTooLong, controlCharacter, badCoordinate, badRadius, noteTooLong
    }

    public var code: Code
    public var field: String
    public var message: String

    public init(_ code: Code, field: String, _ message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    public var description: String { "\(code.rawValue) (\(field)): \(message)" }
}
