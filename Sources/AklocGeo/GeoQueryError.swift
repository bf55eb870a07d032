/// An argument of a geo lookup (or of a saved place) that is refused: the
/// daemon sends it as `badRequest` naming `field`. Codes are stable;
/// messages are for people.
public struct GeoQueryError: Swift.Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        // Lookups.
        case badCoordinate, emptyQuery, queryTooLong, badLimit, badDistance, badCountryCode
        // Saved places.
        case emptyName, nameTooLong, controlCharacter, badRadius, noteTooLong, tooManyPlaces
    }

    public var code: Code
    /// The request member at fault, e.g. `near` or `limit`.
    public var field: String
    public var message: String

    public init(_ code: Code, field: String, _ message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    public var description: String { "\(code.rawValue) (\(field)): \(message)" }

    static func checked(_ coordinate: Coordinate, field: String) throws(GeoQueryError) -> Coordinate {
        guard coordinate.isValid else {
            throw GeoQueryError(
                .badCoordinate, field: field,
                "\(field) must have a finite latitude within ±90 and longitude within ±180")
        }
        return coordinate
    }
}
