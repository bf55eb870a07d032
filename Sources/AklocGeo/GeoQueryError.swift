import AklocCore

/// An argument of a geo lookup (or of a saved place) that is refused: the
/// daemon sends it as `badRequest` naming `field`.
public typealias GeoQueryError = CodedError<GeoQueryErrorCode>

/// The stable codes of `GeoQueryError`.
public enum GeoQueryErrorCode: String, CodedErrorCode {
    // Lookups.
    case badCoordinate, emptyQuery, queryTooLong, badLimit, badDistance, badCountryCode
    // Saved places.
    case emptyName, nameTooLong, controlCharacter, badRadius, noteTooLong, tooManyPlaces
}

extension CodedError where C == GeoQueryErrorCode {
    public init(_ code: C, field: String, _ message: String) {
        self.init(code, message, subject: field)
    }

    /// The request member at fault, e.g. `near` or `limit`.
    public var field: String { subject ?? "" }

    static func checked(_ coordinate: Coordinate, field: String) throws(GeoQueryError) -> Coordinate {
        guard coordinate.isValid else {
            throw GeoQueryError(
                .badCoordinate, field: field,
                "\(field) must have a finite latitude within ±90 and longitude within ±180")
        }
        return coordinate
    }

    /// A search query: at most `maxBytes` (and `maxCharacters`), with a
    /// letter or digit once folded; returns the folded form.
    static func checkedQuery(
        _ query: String, field: String, maxBytes: Int, maxCharacters: Int? = nil
    ) throws(GeoQueryError) -> String {
        guard query.utf8.count <= maxBytes, query.count <= maxCharacters ?? .max else {
            let limit = maxCharacters.map { "\($0) characters" } ?? "\(maxBytes) bytes"
            throw GeoQueryError(.queryTooLong, field: field, "\(field) is longer than \(limit)")
        }
        let folded = TextFolding.fold(query)
        guard !folded.isEmpty else {
            throw GeoQueryError(.emptyQuery, field: field, "\(field) has no letters or digits")
        }
        return folded
    }
}
