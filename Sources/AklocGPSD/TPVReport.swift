import AklocCore
import CGPS

/// The fields of one gpsd TPV report that akloc uses, as plain Swift values.
///
/// It mirrors `gps_data_t.set`, `gps_data_t.fix` and `gps_data_t.dev.path`
/// one to one and does no checking: `TPVConverter` decides what is valid.
/// Keeping the copy separate from libgps lets tests feed NaN, infinities and
/// unset mask bits without a gpsd.
public struct TPVReport: Hashable, Sendable {
    /// The `gps_data_t.set` bits that matter for a TPV (values from gps.h).
    public struct Mask: OptionSet, Hashable, Sendable {
        public var rawValue: UInt64
        public init(rawValue: UInt64) { self.rawValue = rawValue }

        public static let time = Mask(rawValue: akloc_TIME_SET)
        public static let latLon = Mask(rawValue: akloc_LATLON_SET)
        public static let altitude = Mask(rawValue: akloc_ALTITUDE_SET)
        public static let speed = Mask(rawValue: akloc_SPEED_SET)
        public static let track = Mask(rawValue: akloc_TRACK_SET)
        public static let climb = Mask(rawValue: akloc_CLIMB_SET)
        public static let status = Mask(rawValue: akloc_STATUS_SET)
        public static let mode = Mask(rawValue: akloc_MODE_SET)
        public static let horizontalError = Mask(rawValue: akloc_HERR_SET)
        public static let verticalError = Mask(rawValue: akloc_VERR_SET)
        public static let speedError = Mask(rawValue: akloc_SPEEDERR_SET)
        public static let trackError = Mask(rawValue: akloc_TRACKERR_SET)
        public static let climbError = Mask(rawValue: akloc_CLIMBERR_SET)

        /// Everything a full 3D TPV from gpsd 3.22 sets; handy in tests.
        public static let fullFix: Mask = [
            .time, .latLon, .altitude, .speed, .track, .climb, .status, .mode,
            .horizontalError, .verticalError, .speedError, .trackError, .climbError,
        ]
    }

    /// gps.h `MODE_NOT_SEEN`, `MODE_NO_FIX`, `MODE_2D`, `MODE_3D`.
    public static let modeNotSeen = Int(akloc_MODE_NOT_SEEN)
    public static let modeNoFix = Int(akloc_MODE_NO_FIX)
    public static let mode2D = Int(akloc_MODE_2D)
    public static let mode3D = Int(akloc_MODE_3D)

    public var set: Mask
    public var mode: Int
    /// `fix.time` (a timespec); zero seconds means gpsd had no time.
    public var timeSeconds: Int64
    public var timeNanoseconds: Int64
    public var latitude: Double
    public var longitude: Double
    public var altHAE: Double
    public var altMSL: Double
    public var eph: Double
    public var epv: Double
    public var track: Double
    public var epd: Double
    public var speed: Double
    public var eps: Double
    public var climb: Double
    /// `fix.status` (gps.h `STATUS_*`); libgps reports 1 when gpsd left it out.
    public var status: Int
    /// `dev.path`; empty when the TPV named no device.
    public var device: String

    /// Everything unset and NaN, as libgps leaves a field gpsd did not send.
    public init(
        set: Mask = [], mode: Int = TPVReport.modeNotSeen,
        timeSeconds: Int64 = 0, timeNanoseconds: Int64 = 0,
        latitude: Double = .nan, longitude: Double = .nan,
        altHAE: Double = .nan, altMSL: Double = .nan,
        eph: Double = .nan, epv: Double = .nan,
        track: Double = .nan, epd: Double = .nan,
        speed: Double = .nan, eps: Double = .nan, climb: Double = .nan,
        status: Int = 0, device: String = ""
    ) {
        self.set = set
        self.mode = mode
        self.timeSeconds = timeSeconds
        self.timeNanoseconds = timeNanoseconds
        self.latitude = latitude
        self.longitude = longitude
        self.altHAE = altHAE
        self.altMSL = altMSL
        self.eph = eph
        self.epv = epv
        self.track = track
        self.epd = epd
        self.speed = speed
        self.eps = eps
        self.climb = climb
        self.status = status
        self.device = device
    }
}

extension TPVReport {
    /// Copies the TPV fields out of libgps's state after `gps_read` returned a TPV line.
    init(_ data: UnsafePointer<gps_data_t>) {
        let fix = data.pointee.fix
        self.init(
            set: Mask(rawValue: data.pointee.set), mode: Int(fix.mode),
            timeSeconds: Int64(fix.time.tv_sec), timeNanoseconds: Int64(fix.time.tv_nsec),
            latitude: fix.latitude, longitude: fix.longitude,
            altHAE: fix.altHAE, altMSL: fix.altMSL,
            eph: fix.eph, epv: fix.epv,
            track: fix.track, epd: fix.epd,
            speed: fix.speed, eps: fix.eps, climb: fix.climb,
            status: Int(fix.status), device: cString(data.pointee.dev.path))
    }
}

/// Reads a fixed-size C `char` array (imported as a tuple) up to its first NUL,
/// never past its end even if libgps left it unterminated.
func cString<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { raw in
        let bytes = raw.prefix { $0 != 0 }
        return String(decoding: bytes, as: UTF8.self)
    }
}
