import AklocCore

/// The properties of one `org.freedesktop.GeoClue2.Location` object, with
/// unknown values encoded as GeoClue does (the interface XML): altitude
/// -DBL_MAX, speed and heading -1, accuracy -1 (GCLUE_LOCATION_ACCURACY_UNKNOWN).
public struct GeoClueLocation: Hashable, Sendable {
    public static let unknownAltitude = -Double.greatestFiniteMagnitude
    public static let unknownSpeed = -1.0
    public static let unknownHeading = -1.0
    public static let unknownAccuracy = -1.0

    public var latitude: Double
    public var longitude: Double
    public var accuracy: Double
    public var altitude: Double
    public var speed: Double
    public var heading: Double
    public var description: String
    /// Seconds and microseconds since 1970 (`Timestamp`, "(tt)").
    public var timestamp: (seconds: UInt64, microseconds: UInt64)

    /// `location` as it is, unknowns encoded. The timestamp is when aklocd
    /// received the fix (the receiver's own clock can be 1024 weeks off,
    /// DESIGN §2), else the fix's time.
    public init(_ location: Location) {
        latitude = location.latitude
        longitude = location.longitude
        accuracy = location.horizontalAccuracy ?? Self.unknownAccuracy
        altitude = location.altitude ?? Self.unknownAltitude
        speed = location.speed ?? Self.unknownSpeed
        heading = location.course ?? Self.unknownHeading
        description = ""
        let time = location.receivedAt ?? location.timestamp ?? FixTime(secondsSince1970: 0)
        timestamp = (UInt64(max(0, time.secondsSince1970)), UInt64(max(0, time.nanoseconds) / 1000))
    }

    public static func == (lhs: GeoClueLocation, rhs: GeoClueLocation) -> Bool {
        lhs.latitude == rhs.latitude && lhs.longitude == rhs.longitude && lhs.accuracy == rhs.accuracy
            && lhs.altitude == rhs.altitude && lhs.speed == rhs.speed && lhs.heading == rhs.heading
            && lhs.description == rhs.description && lhs.timestamp == rhs.timestamp
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(latitude)
        hasher.combine(longitude)
        hasher.combine(timestamp.seconds)
        hasher.combine(timestamp.microseconds)
    }
}
