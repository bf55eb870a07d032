import AklocCore
import AklocJSON

extension ClientRequest {
    /// `visits` and `trips`: optional `since` and `until` (docs/protocol.md);
    /// a bad one is `badRequest` naming it, a reversed or too long range too.
    static func decodeTimeline(_ members: [String: JSONValue]) throws(ProtocolError) -> TimelineQuery {
        let query = TimelineQuery(
            since: try TrackTime.decode(members["since"], field: "since"),
            until: try TrackTime.decode(members["until"], field: "until"))
        if let since = query.since, let until = query.until {
            _ = try query.range(now: until < since ? since : until)
        }
        return query
    }

    /// The members after the op name on the client side: what `decodeTimeline` reads back.
    func writeTimelineQuery(_ query: TimelineQuery, to writer: inout JSONWriter) {
        writeRange(since: query.since, until: query.until, to: &writer)
    }
}
