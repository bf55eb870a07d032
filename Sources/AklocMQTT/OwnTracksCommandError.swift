import AklocCore

/// Why a message on `<topic>/cmd` was ignored (docs/mqtt.md, "Commands").
public typealias OwnTracksCommandError = CodedError<OwnTracksCommandErrorCode>

/// The stable codes of `OwnTracksCommandError`, one per kind of refusal:
/// the log rate-limits each on its own.
public enum OwnTracksCommandErrorCode: String, CodedErrorCode, CaseIterable {
    /// Longer than `OwnTracksCommand.maxPayloadBytes`.
    case tooLarge
    /// Not a JSON object (garbage, truncated, too deep, not UTF-8).
    case malformed
    /// A JSON object whose `_type` is not `"cmd"` (an `encrypted` one included).
    case notACommand
    /// No `action`, or one akloc does not carry out (`reportSteps`,
    /// `setConfiguration`, …).
    case unknownAction
    /// A command akloc knows that `[mqtt] commands` does not name.
    case notEnabled
    /// `setWaypoints` without a usable list, or with a waypoint akloc
    /// cannot save (no `desc`, a bad coordinate or radius, too many).
    case badWaypoints
}
