import AklocCore

/// Saved places and region crossings in OwnTracks JSON (DESIGN §8,
/// https://owntracks.org/booklet/tech/json/ and features/waypoints): what
/// OwnTracks Recorder and Home Assistant read from a phone's geofences.
extension OwnTracksPayload {
    /// One region as OwnTracks names it: `desc` is the place's name, `tst`
    /// its creation time (OwnTracks' identity of a waypoint), `rad` metres.
    public struct Waypoint: Hashable, Sendable {
        public var name: String
        public var latitude: Double
        public var longitude: Double
        public var radius: Double
        public var createdAt: FixTime

        public init(name: String, latitude: Double, longitude: Double, radius: Double, createdAt: FixTime) {
            self.name = name
            self.latitude = latitude
            self.longitude = longitude
            self.radius = radius
            self.createdAt = createdAt
        }
    }

    /// OwnTracks `event` of a transition.
    public enum TransitionEvent: String, Hashable, Sendable {
        case enter
        case leave
    }

    /// `{"_type":"waypoint","desc","lat","lon","rad","tst"}`.
    public static func waypoint(_ waypoint: Waypoint) -> [UInt8] {
        var object = Object()
        object.string("_type", "waypoint")
        object.string("desc", waypoint.name)
        object.real("lat", waypoint.latitude)
        object.real("lon", waypoint.longitude)
        object.integer("rad", waypoint.radius)
        object.whole("tst", waypoint.createdAt.secondsSince1970)
        return object.bytes()
    }

    /// `{"_type":"waypoints","waypoints":[…]}` on `<topic>/waypoints`: the
    /// whole list, as the apps export it.
    public static func waypoints(_ waypoints: [Waypoint]) -> [UInt8] {
        var bytes = Array("{\"_type\":\"waypoints\",\"waypoints\":[".utf8)
        for (index, item) in waypoints.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += waypoint(item)
        }
        bytes += Array("]}".utf8)
        return bytes
    }

    /// `{"_type":"transition","acc","desc","event","lat","lon","t":"c","tid","tst","wtst"}`
    /// on `<topic>/event`: where the crossing was seen (the fix, its
    /// accuracy and time) and which waypoint (`desc`, `wtst`). `t` "c" is a
    /// circular region (OwnTracks' "b" would be a beacon).
    public static func transition(
        _ event: TransitionEvent, waypoint: Waypoint, location: Location, tid: String, now: FixTime
    ) -> [UInt8] {
        var object = Object()
        object.string("_type", "transition")
        if let accuracy = location.horizontalAccuracy { object.integer("acc", accuracy) }
        object.string("desc", waypoint.name)
        object.string("event", event.rawValue)
        object.real("lat", location.latitude)
        object.real("lon", location.longitude)
        object.string("t", "c")
        object.string("tid", tid)
        object.whole("tst", (location.timestamp ?? location.receivedAt ?? now).secondsSince1970)
        object.whole("wtst", waypoint.createdAt.secondsSince1970)
        return object.bytes()
    }
}
