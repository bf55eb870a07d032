import AklocCore

/// Why a track request failed.
public typealias TrackError = CodedError<TrackErrorCode>

/// The stable codes of `TrackError`.
public enum TrackErrorCode: String, CodedErrorCode {
    /// The `after` cursor names a file that is gone or was rewritten.
    case badCursor
    /// The journal could not be read or changed (an I/O error).
    case storageFailed
    /// An import the track cannot take (a point in the future or older
    /// than `retention-days`, or more than `max-size`).
    case badImport
}
