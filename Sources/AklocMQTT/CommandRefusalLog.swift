import AklocCore

/// Which ignored commands reach the log: the first of each kind
/// (`OwnTracksCommandErrorCode`) at once, then at most one of that kind per
/// `interval`, saying how many went unlogged since. A broker, or anyone
/// who may publish to `<topic>/cmd`, cannot fill the journal. Pure: takes
/// `now`, returns the line to log or nil.
struct CommandRefusalLog {
    static let interval = 60.0

    private struct Kind {
        var loggedAt: Instant
        var unlogged: Int
    }

    private var kinds: [OwnTracksCommandErrorCode: Kind] = [:]
    /// Every refusal, logged or not.
    private(set) var total = 0

    mutating func refused(_ error: OwnTracksCommandError, at now: Instant) -> String? {
        total += 1
        if let kind = kinds[error.code], now.seconds(since: kind.loggedAt) < Self.interval {
            kinds[error.code]!.unlogged += 1
            return nil
        }
        let unlogged = kinds[error.code]?.unlogged ?? 0
        kinds[error.code] = Kind(loggedAt: now, unlogged: 0)
        let since = unlogged > 0 ? " (\(unlogged) more of this kind ignored since the last line)" : ""
        return "MQTT: ignored a command on the cmd topic: \(error)\(since)"
    }
}
