import AklocCore

/// The JSON the forwarder publishes, in the OwnTracks format
/// (https://owntracks.org/booklet/tech/json/) that OwnTracks Recorder, Home
/// Assistant and Node-RED flows read. Pure: a `Location` in, bytes out.
///
/// OwnTracks omits what a device does not know rather than sending null or a
/// sentinel, and so does akloc: a fix without altitude has no `alt`.
public enum OwnTracksPayload {
    /// OwnTracks `t`: why the location was published.
    public enum Trigger: String, Hashable, Sendable {
        /// By the forwarder's throttle (OwnTracks: "t", timer based).
        case timer = "t"
        /// Asked for explicitly (OwnTracks: "u", manual/user request).
        case requested = "u"
    }

    /// OwnTracks `m`, the monitoring mode: akloc's speed-based throttle is
    /// closest to "significant location change" mode (1).
    public static let monitoringMode = 1

    /// A `_type:"location"` object. `tst` is the fix's own time, falling back
    /// to when aklocd received it, then to `now`, so a consumer always gets one.
    public static func location(_ location: Location, tid: String, trigger: Trigger, now: FixTime) -> [UInt8] {
        var object = Object()
        object.string("_type", "location")
        if let accuracy = location.horizontalAccuracy { object.integer("acc", accuracy) }
        if let altitude = location.altitude { object.integer("alt", altitude) }
        if let course = location.course {
            // 359.6 rounds to 360, which OwnTracks spells 0.
            object.integer("cog", Double(Int(course.rounded()) % 360))
        }
        object.real("lat", location.latitude)
        object.real("lon", location.longitude)
        object.raw("m", String(monitoringMode))
        object.string("t", trigger.rawValue)
        object.string("tid", tid)
        let time = location.timestamp ?? location.receivedAt ?? now
        object.raw("tst", String(time.secondsSince1970))
        if let verticalAccuracy = location.verticalAccuracy { object.integer("vac", verticalAccuracy) }
        // OwnTracks' `vel` is whole km/h.
        if let speed = location.speed { object.integer("vel", speed * 3.6) }
        return object.bytes()
    }

    /// The last will, published by the broker when the daemon vanishes
    /// without disconnecting: `tst` is when the connection was made, as the
    /// OwnTracks apps do.
    public static func lastWill(connectedAt: FixTime) -> [UInt8] {
        var object = Object()
        object.string("_type", "lwt")
        object.raw("tst", String(connectedAt.secondsSince1970))
        return object.bytes()
    }

    /// The retained status on `<topic>/akloc/status`: `online` true while
    /// connected, false after a clean shutdown. Its own `_type`, so OwnTracks
    /// consumers that do not know it skip it.
    public static func status(online: Bool, tid: String, version: String, at time: FixTime) -> [UInt8] {
        var object = Object()
        object.string("_type", "akloc-status")
        object.raw("online", online ? "true" : "false")
        object.string("tid", tid)
        object.raw("tst", String(time.secondsSince1970))
        object.string("version", version)
        return object.bytes()
    }

    /// A flat JSON object written in key order, which keeps payloads stable
    /// for tests and byte-identical across restarts.
    struct Object {
        private var text = "{"

        mutating func raw(_ key: String, _ value: String) {
            if text.count > 1 { text += "," }
            text += "\"\(key)\":\(value)"
        }

        mutating func string(_ key: String, _ value: String) {
            raw(key, OwnTracksPayload.quoted(value))
        }

        /// Metres, degrees and km/h are integers in OwnTracks.
        mutating func integer(_ key: String, _ value: Double) {
            guard value.isFinite, abs(value) < 1e15 else { return }
            raw(key, String(Int64(value.rounded())))
        }

        mutating func real(_ key: String, _ value: Double) {
            guard value.isFinite else { return }
            raw(key, value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value))
        }

        func bytes() -> [UInt8] { Array((text + "}").utf8) }
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    static func quoted(_ value: String) -> String {
        var result = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
