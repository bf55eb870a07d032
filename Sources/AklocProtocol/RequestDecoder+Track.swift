import AklocCore
import AklocJSON

extension ClientRequest {
    /// The longest `after` cursor accepted; the daemon's own are under 64 bytes.
    public static let maxCursorLength = 256

    /// `track`: every argument optional (docs/protocol.md); each bad one is
    /// `badRequest` naming it.
    static func decodeTrack(_ members: [String: JSONValue]) throws(ProtocolError) -> TrackQuery {
        var query = TrackQuery()
        query.since = try TrackTime.decode(members["since"], field: "since")
        query.until = try TrackTime.decode(members["until"], field: "until")
        if let since = query.since, let until = query.until, since > until {
            throw ProtocolError(.badRequest, "\"since\" (\(since)) is after \"until\" (\(until))")
        }
        if let value = members["limit"], value != .null {
            guard case .int(let limit) = value else {
                throw ProtocolError(.badRequest, "\"limit\" must be a whole number of points, not \(value.typeName)")
            }
            guard (1...Int64(TrackQuery.maxLimit)).contains(limit) else {
                throw ProtocolError(.badRequest, "\"limit\" must be 1-\(TrackQuery.maxLimit), got \(limit)")
            }
            query.limit = Int(limit)
        }
        if let value = members["after"], value != .null {
            guard case .string(let cursor) = value else {
                throw ProtocolError(
                    .badRequest, "\"after\" must be the \"next\" string of a page, not \(value.typeName)")
            }
            guard !cursor.isEmpty, cursor.utf8.count <= maxCursorLength else {
                throw ProtocolError(.badRequest, "\"after\" is not a cursor this daemon made")
            }
            query.after = cursor
        }
        if let value = members["simplify"], value != .null {
            guard let metres = value.doubleValue else {
                throw ProtocolError(.badRequest, "\"simplify\" must be a tolerance in metres, not \(value.typeName)")
            }
            guard metres >= 0, metres <= TrackQuery.maxSimplify else {
                throw ProtocolError(
                    .badRequest, "\"simplify\" must be 0-\(Int(TrackQuery.maxSimplify)) metres, got \(value.jsonString)"
                )
            }
            query.simplify = metres > 0 ? metres : nil
        }
        return query
    }

    /// `since` and `until` members (`track`, `visits`, `trips`), each when given.
    func writeRange(since: FixTime?, until: FixTime?, to writer: inout JSONWriter) {
        if let since {
            writer.raw(",\"since\":")
            TrackTime.write(since, to: &writer)
        }
        if let until {
            writer.raw(",\"until\":")
            TrackTime.write(until, to: &writer)
        }
    }

    /// `clearTrack`: optional `before` (everything when absent).
    static func decodeClearTrack(_ members: [String: JSONValue]) throws(ProtocolError) -> FixTime? {
        try TrackTime.decode(members["before"], field: "before")
    }

    /// The members after `"op":"clearTrack"` on the client side: what
    /// `decodeClearTrack` reads back.
    func writeClearTrack(before: FixTime?, to writer: inout JSONWriter) {
        guard let before else { return }
        writer.raw(",\"before\":")
        TrackTime.write(before, to: &writer)
    }

    /// The members after `"op":"track"` on the client side (`encodedLine`):
    /// what `decodeTrack` reads back, defaults left out.
    func writeTrackQuery(_ query: TrackQuery, to writer: inout JSONWriter) {
        writeRange(since: query.since, until: query.until, to: &writer)
        if query.limit != TrackQuery.defaultLimit {
            writer.raw(",\"limit\":")
            writer.integer(Int64(query.limit))
        }
        if let after = query.after {
            writer.raw(",\"after\":")
            writer.string(after)
        }
        if let simplify = query.simplify {
            writer.raw(",\"simplify\":")
            writer.number(simplify)
        }
    }
}

extension TrackTime {
    /// A `track` or `clearTrack` time member as the daemon reads it (absent
    /// or null is nil); a bad one is `badRequest` naming `field`. The CLI
    /// checks its options with this too, so both say the same.
    public static func decode(_ value: JSONValue?, field name: String) throws(ProtocolError) -> FixTime? {
        guard let value, value != .null else { return nil }
        switch value {
        case .string(let text):
            guard let time = TrackTime.parse(text) else {
                let shown = text.count > 64 ? String(text.prefix(64)) + "…" : text
                throw ProtocolError(
                    .badRequest,
                    "\"\(name)\" is not an ISO 8601 time (such as 2026-12-01T14:05:00Z) or epoch seconds: \"\(shown)\"")
            }
            return time
        case .int, .double:
            guard let seconds = value.doubleValue, let time = TrackTime.fromEpoch(seconds) else {
                throw ProtocolError(.badRequest, "\"\(name)\" must be epoch seconds from 0 to year 9999")
            }
            return time
        default:
            throw ProtocolError(
                .badRequest, "\"\(name)\" must be an ISO 8601 time or epoch seconds, not \(value.typeName)")
        }
    }
}
