import AklocCore
import AklocJSON
import AklocProtocol

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
        /// The answer to a `reportLocation` command (OwnTracks: "r").
        case response = "r"
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
        object.whole("m", Int64(monitoringMode))
        object.string("t", trigger.rawValue)
        object.string("tid", tid)
        let time = location.timestamp ?? location.receivedAt ?? now
        object.whole("tst", time.secondsSince1970)
        if let verticalAccuracy = location.verticalAccuracy { object.integer("vac", verticalAccuracy) }
        // OwnTracks' `vel` is whole km/h.
        if let speed = location.speed { object.integer("vel", speed * 3.6) }
        return object.bytes()
    }

    /// The retained status on `<topic>/akloc/status`: `online` true while
    /// connected, false after a clean shutdown and, as the connection's last
    /// will, when the broker loses the daemon without one. Its own `_type`, so OwnTracks
    /// consumers that do not know it skip it.
    public static func status(online: Bool, tid: String, version: String, at time: FixTime) -> [UInt8] {
        var object = Object()
        object.string("_type", "akloc-status")
        object.bool("online", online)
        object.string("tid", tid)
        object.whole("tst", time.secondsSince1970)
        object.string("version", version)
        return object.bytes()
    }

    /// A flat JSON object written in key order, which keeps payloads stable
    /// for tests and byte-identical across restarts. The escaping and number
    /// formatting are the wire protocol's `JSONWriter`.
    struct Object {
        private var writer = JSONWriter(capacity: 256)
        private var isEmpty = true

        init() {
            writer.byte(UInt8(ascii: "{"))
        }

        private mutating func key(_ key: StaticString) {
            if !isEmpty { writer.byte(UInt8(ascii: ",")) }
            isEmpty = false
            writer.key(key)
        }

        mutating func string(_ key: StaticString, _ value: String) {
            self.key(key)
            writer.string(value)
        }

        mutating func whole(_ key: StaticString, _ value: Int64) {
            self.key(key)
            writer.integer(value)
        }

        mutating func strings(_ key: StaticString, _ values: [String]) {
            self.key(key)
            writer.byte(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { writer.byte(UInt8(ascii: ",")) }
                writer.string(value)
            }
            writer.byte(UInt8(ascii: "]"))
        }

        mutating func bool(_ key: StaticString, _ value: Bool) {
            self.key(key)
            writer.bool(value)
        }

        /// Metres, degrees and km/h are integers in OwnTracks.
        mutating func integer(_ key: StaticString, _ value: Double) {
            guard value.isFinite, abs(value) < 1e15 else { return }
            whole(key, Int64(value.rounded()))
        }

        /// Whole numbers without a fraction, as OwnTracks apps write them.
        mutating func real(_ key: StaticString, _ value: Double) {
            guard value.isFinite else { return }
            if value == value.rounded(), abs(value) < 1e15 {
                whole(key, Int64(value))
            } else {
                self.key(key)
                writer.number(value)
            }
        }

        func bytes() -> [UInt8] { writer.bytes + [UInt8(ascii: "}")] }
    }
}
