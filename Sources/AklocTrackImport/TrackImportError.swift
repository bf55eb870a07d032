import AklocCore

/// Why a file cannot be imported (docs/track.md, "Importing"): the message
/// starts with the byte offset where the reader found the problem.
public typealias TrackImportError = CodedError<TrackImportErrorCode>

/// The stable codes of `TrackImportError`.
public enum TrackImportErrorCode: String, CodedErrorCode {
    /// Not well-formed: broken JSON or XML, or the file ends in the middle.
    case malformed
    /// Well-formed, but a member is missing, of the wrong type or out of range.
    case badPoint
    /// A record or token longer than the reader takes.
    case tooLarge
    /// Not one of the formats read (GPX 1.0/1.1, Records.json, Timeline.json).
    case unknownFormat
    /// The file could not be read.
    case unreadable
}

extension CodedError where C == TrackImportErrorCode {
    /// `at byte N: message`, the form every import error has.
    static func at(_ offset: Int, _ code: TrackImportErrorCode, _ message: String) -> TrackImportError {
        TrackImportError(code, "at byte \(offset): \(message)")
    }
}
