/// A position fix, with CoreLocation-style names (DESIGN §2).
///
/// Every field that the receiver did not report is `nil`; the wire encoding
/// omits it. Nothing here is ever NaN or infinite: the gpsd reader checks each
/// float before building a `Location`.
public struct Location: Hashable, Sendable, Codable {
    public enum Mode: String, Hashable, Sendable, Codable {
        case twoD = "2d"
        case threeD = "3d"
    }

    public var latitude: Double
    public var longitude: Double
    /// Altitude above mean sea level, metres.
    public var altitude: Double?
    /// Height above the WGS84 ellipsoid, metres.
    public var ellipsoidalAltitude: Double?
    /// gpsd `eph`, metres.
    public var horizontalAccuracy: Double?
    /// gpsd `epv`, metres.
    public var verticalAccuracy: Double?
    /// Metres per second.
    public var speed: Double?
    /// gpsd `eps`, metres per second.
    public var speedAccuracy: Double?
    /// Degrees from true north (gpsd `track`).
    public var course: Double?
    /// gpsd `epd`, degrees.
    public var courseAccuracy: Double?
    /// Vertical speed, metres per second.
    public var climb: Double?
    public var mode: Mode
    /// The fix's own time, as gpsd reported it (ISO 8601 UTC on the wire).
    public var timestamp: FixTime?
    /// Wall-clock time at which aklocd received the fix.
    public var receivedAt: FixTime?
    /// The receiver's device path, as gpsd names it.
    public var device: String?
    /// How the fix was made (gpsd's TPV `status`); nil when gpsd did not say.
    public var fixStatus: FixStatus?
    /// Satellites used in the solution, from the device's latest SKY report.
    public var satellitesUsed: Int?
    /// Horizontal dilution of precision, from the device's latest SKY report.
    public var hdop: Double?

    public init(
        latitude: Double, longitude: Double, mode: Mode = .threeD,
        altitude: Double? = nil, ellipsoidalAltitude: Double? = nil,
        horizontalAccuracy: Double? = nil, verticalAccuracy: Double? = nil,
        speed: Double? = nil, speedAccuracy: Double? = nil,
        course: Double? = nil, courseAccuracy: Double? = nil, climb: Double? = nil,
        timestamp: FixTime? = nil, receivedAt: FixTime? = nil, device: String? = nil,
        fixStatus: FixStatus? = nil, satellitesUsed: Int? = nil, hdop: Double? = nil
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.mode = mode
        self.altitude = altitude
        self.ellipsoidalAltitude = ellipsoidalAltitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.speed = speed
        self.speedAccuracy = speedAccuracy
        self.course = course
        self.courseAccuracy = courseAccuracy
        self.climb = climb
        self.timestamp = timestamp
        self.receivedAt = receivedAt
        self.device = device
        self.fixStatus = fixStatus
        self.satellitesUsed = satellitesUsed
        self.hdop = hdop
    }
}

/// A wall-clock time with nanosecond precision, encoded as ISO 8601 UTC
/// (`2026-11-30T15:09:11.123Z`). Kept free of Foundation so the core stays pure.
public struct FixTime: Hashable, Sendable, Comparable {
    public var secondsSince1970: Int64
    public var nanoseconds: Int32

    public init(secondsSince1970: Int64, nanoseconds: Int32 = 0) {
        self.secondsSince1970 = secondsSince1970
        self.nanoseconds = nanoseconds
    }

    public static func < (lhs: FixTime, rhs: FixTime) -> Bool {
        (lhs.secondsSince1970, lhs.nanoseconds) < (rhs.secondsSince1970, rhs.nanoseconds)
    }
}
