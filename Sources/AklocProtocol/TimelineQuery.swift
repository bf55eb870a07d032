import AklocCore

/// The `visits` and `trips` ops' arguments (docs/protocol.md, DESIGN §15):
/// which stretch of the recorded track, by when aklocd received the fixes.
/// What overlaps it is returned: a visit that began before `since` and
/// ended after it is one of its visits.
public struct TimelineQuery: Hashable, Sendable {
    /// Nil means `until` less a day (`since`) and now (`until`).
    public var since: FixTime?
    public var until: FixTime?

    /// Seconds before `until` that `since` defaults to.
    public static let defaultSpan: Int64 = 86_400
    /// The longest range one request may ask for: a reply must fit a
    /// client's queue (a longer history is asked for a month at a time).
    public static let maxSpan: Int64 = 31 * 86_400

    public init(since: FixTime? = nil, until: FixTime? = nil) {
        self.since = since
        self.until = until
    }

    /// The range in force at `now`, or `badRequest` naming the member at fault.
    public func range(now: FixTime) throws(ProtocolError) -> (since: FixTime, until: FixTime) {
        let until = until ?? now
        let since =
            since
            ?? FixTime(
                secondsSince1970: max(0, until.secondsSince1970 - Self.defaultSpan), nanoseconds: until.nanoseconds)
        guard since <= until else {
            throw ProtocolError(.badRequest, "\"since\" (\(since)) is after \"until\" (\(until), now by default)")
        }
        guard until.secondsSince1970 - since.secondsSince1970 <= Self.maxSpan else {
            throw ProtocolError(
                .badRequest,
                "\"until\" is more than \(Self.maxSpan / 86_400) days after \"since\"; ask for a month at a time")
        }
        return (since, until)
    }
}
