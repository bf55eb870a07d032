import AklocCore
import AklocJSON

/// Encodes the daemon's messages, one line each, ending in "\n".
///
/// Hot path: `event(_:)` is called once per event and the bytes fanned out to
/// every subscriber, so it writes JSON by hand (no `JSONEncoder`, no
/// intermediate dictionaries). Doubles are printed shortest-round-trip;
/// non-finite values never reach the wire (a location field is omitted, any
/// other number becomes `null`).
public enum ServerEncoder {
    /// `{"event":"hello","protocol":1,"version":"…","authorizationStatus":"…"}`
    public static func hello(
        version: String = AklocVersion.string, authorizationStatus: AuthorizationStatus
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: 96)
        writer.raw("{\"event\":\"hello\",\"protocol\":")
        writer.integer(Int64(AklocProtocolVersion.protocolVersion))
        writer.raw(",\"version\":")
        writer.string(version)
        writer.raw(",\"authorizationStatus\":")
        writer.string(authorizationStatus.rawValue)
        writer.raw("}\n")
        return writer.bytes
    }

    /// One delegate-style or `change` event.
    public static func event(_ event: Engine.Event) -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        switch event {
        case .didGetFirstLocation(let location):
            writer.raw("{\"event\":\"didGetFirstLocation\",\"location\":")
            writeLocation(location, to: &writer)
        case .didUpdateLocation(let location, let afterTimeInterval):
            writer.raw("{\"event\":\"didUpdateLocation\",\"location\":")
            writeLocation(location, to: &writer)
            if let afterTimeInterval, afterTimeInterval.isFinite {
                writer.raw(",\"afterTimeInterval\":")
                writer.number((afterTimeInterval * 1000).rounded() / 1000)
            }
        case .didGetError(let error):
            writer.raw("{\"event\":\"didGetError\",\"error\":")
            writer.string(error.rawValue)
        case .didGetNotification(let notification):
            writer.raw("{\"event\":\"didGetNotification\",\"notification\":")
            writer.string(notification.rawValue)
        case .change(let keyPath, let new, let old):
            writer.raw("{\"event\":\"change\",\"keyPath\":")
            writer.string(keyPath.description)
            writer.raw(",\"new\":")
            writeValue(new, to: &writer)
            if let old {
                writer.raw(",\"old\":")
                writeValue(old, to: &writer)
            }
        case .didCrossRegion(let crossing):
            writer.raw(crossing.kind == .enter ? "{\"event\":\"didEnterRegion\"" : "{\"event\":\"didExitRegion\"")
            writer.raw(",\"place\":")
            writer.bytes.append(contentsOf: crossing.place)
            writer.raw(",\"location\":")
            writeLocation(crossing.location, to: &writer)
        case .didVisit(let visit):
            writer.raw("{\"event\":\"didVisit\",\"visit\":")
            writer.bytes += visit
        }
        writer.raw("}\n")
        return writer.bytes
    }

    /// The reply to an engine request: `{"id":…,"ok":true,"result":…}` or an error reply.
    ///
    /// Results: `.done` is `null`, `.value` the key path's value, `.location`
    /// a location object, `.authorization` `{"authorizationStatus":"…"}`.
    public static func reply(id: RequestID?, _ result: Result<Engine.Reply, EngineError>) -> [UInt8] {
        switch result {
        case .failure(let error):
            return reply(id: id, error: ProtocolError(error))
        case .success(let reply):
            var writer = JSONWriter(capacity: 256)
            writeReplyHead(id: id, to: &writer)
            switch reply {
            case .done: writer.raw("null")
            case .value(let value): writeValue(value, to: &writer)
            case .location(let location): writeLocation(location, to: &writer)
            case .authorization(let status):
                writer.raw("{\"authorizationStatus\":")
                writer.string(status.rawValue)
                writer.byte(UInt8(ascii: "}"))
            }
            writer.raw("}\n")
            return writer.bytes
        }
    }

    /// A successful reply whose result is `null` (pause, resume, reload, authorize, …).
    public static func replyDone(id: RequestID?) -> [UInt8] {
        reply(id: id, result: .null)
    }

    /// A successful reply with any JSON result.
    public static func reply(id: RequestID?, result: JSONValue) -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writeReplyHead(id: id, to: &writer)
        writer.value(result)
        writer.raw("}\n")
        return writer.bytes
    }

    /// A successful reply whose result `write` writes (one JSON value).
    public static func reply(id: RequestID?, writing write: (inout JSONWriter) -> Void) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writeReplyHead(id: id, to: &writer)
        write(&writer)
        writer.raw("}\n")
        return writer.bytes
    }

    /// The `status` reply.
    public static func reply(id: RequestID?, status: DaemonStatus) -> [UInt8] {
        var writer = JSONWriter(capacity: 1024)
        writeReplyHead(id: id, to: &writer)
        status.write(to: &writer)
        writer.raw("}\n")
        return writer.bytes
    }

    /// `{"id":…,"ok":false,"error":{"code":"…","message":"…"}}`. The id is the
    /// one given, or else the one recovered into the error, or `null`.
    public static func reply(id: RequestID? = nil, error: ProtocolError) -> [UInt8] {
        var writer = JSONWriter(capacity: 160)
        writer.raw("{\"id\":")
        writeID(id ?? error.id, to: &writer)
        writer.raw(",\"ok\":false,\"error\":{\"code\":")
        writer.string(error.code.rawValue)
        writer.raw(",\"message\":")
        writer.string(error.message)
        writer.raw("}}\n")
        return writer.bytes
    }

    /// `{"id":…,"ok":true,"result":` (a `track` page goes on from here).
    static func writeReplyHead(id: RequestID?, to writer: inout JSONWriter) {
        writer.raw("{\"id\":")
        writeID(id, to: &writer)
        writer.raw(",\"ok\":true,\"result\":")
    }

    private static func writeID(_ id: RequestID?, to writer: inout JSONWriter) {
        switch id {
        case nil: writer.raw("null")
        case .int(let value)?: writer.integer(value)
        case .double(let value)?: writer.number(value)
        case .string(let value)?: writer.string(value)
        }
    }

    /// A key path's value: `null`, a number, a string, a location object, a
    /// coordinate `{"latitude":…,"longitude":…}` or an ISO 8601 time string.
    public static func writeValue(_ value: KeyPathValue, to writer: inout JSONWriter) {
        switch value {
        case .null: writer.raw("null")
        case .number(let number): writer.number(number)
        case .string(let text): writer.string(text)
        case .location(let location): writeLocation(location, to: &writer)
        case .coordinate(let latitude, let longitude):
            writer.raw("{\"latitude\":")
            writer.number(latitude)
            writer.raw(",\"longitude\":")
            writer.number(longitude)
            writer.byte(UInt8(ascii: "}"))
        case .time(let time): writer.time(time)
        case .json(let bytes): writer.bytes += bytes
        case .sky(let sky): writeSky(sky, to: &writer)
        case .names(let names):
            writer.byte(UInt8(ascii: "["))
            for (position, name) in names.enumerated() {
                if position > 0 { writer.byte(UInt8(ascii: ",")) }
                writer.string(name)
            }
            writer.byte(UInt8(ascii: "]"))
        }
    }

    /// A location object with the `Location` field names; unknown (nil or
    /// non-finite) fields are omitted.
    public static func writeLocation(_ location: Location, to writer: inout JSONWriter) {
        writer.raw("{\"latitude\":")
        writer.number(location.latitude.isFinite ? location.latitude : 0)
        writer.raw(",\"longitude\":")
        writer.number(location.longitude.isFinite ? location.longitude : 0)
        @inline(__always) func field(_ key: StaticString, _ value: Double?) {
            guard let value, value.isFinite else { return }
            writer.byte(UInt8(ascii: ","))
            writer.key(key)
            writer.number(value)
        }
        field("altitude", location.altitude)
        field("ellipsoidalAltitude", location.ellipsoidalAltitude)
        field("horizontalAccuracy", location.horizontalAccuracy)
        field("verticalAccuracy", location.verticalAccuracy)
        field("speed", location.speed)
        field("speedAccuracy", location.speedAccuracy)
        field("course", location.course)
        field("courseAccuracy", location.courseAccuracy)
        field("climb", location.climb)
        writer.raw(",\"mode\":")
        writer.string(location.mode.rawValue)
        if let timestamp = location.timestamp {
            writer.raw(",\"timestamp\":")
            writer.time(timestamp)
        }
        if let receivedAt = location.receivedAt {
            writer.raw(",\"receivedAt\":")
            writer.time(receivedAt)
        }
        if let device = location.device {
            writer.raw(",\"device\":")
            writer.string(device)
        }
        if let fixStatus = location.fixStatus {
            writer.raw(",\"fixStatus\":")
            writer.string(fixStatus.rawValue)
        }
        if let satellitesUsed = location.satellitesUsed {
            writer.raw(",\"satellitesUsed\":")
            writer.integer(Int64(satellitesUsed))
        }
        field("hdop", location.hdop)
        writer.byte(UInt8(ascii: "}"))
    }
}

extension Engine.Event {
    /// For a slow reader's queue (docs/protocol.md §9): events with the same
    /// key may replace each other, newest wins; nil means never drop or merge
    /// (first fixes, errors, notifications). Location updates of the
    /// throttled stream, of the every-epoch stream, and `change` events of
    /// each location key path each have their own key.
    public var coalescingKey: String? {
        switch self {
        case .didUpdateLocation(_, let afterTimeInterval):
            afterTimeInterval == nil ? "didUpdateLocation/epoch" : "didUpdateLocation"
        case .change(let keyPath, _, _):
            keyPath.revealsLocation ? "change/\(keyPath)" : nil
        case .didGetFirstLocation, .didGetError, .didGetNotification, .didCrossRegion, .didVisit:
            nil
        }
    }
}
