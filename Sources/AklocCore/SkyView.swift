/// What one receiver sees of the sky: gpsd's SKY report, checked
/// (DESIGN §16). Every number here is finite; what the receiver did not
/// report is nil.
public struct SkyView: Hashable, Sendable {
    /// The GNSS a satellite belongs to: gpsd's `gnssid` (u-blox numbering, gps.h `GNSSID_*`).
    public enum Constellation: String, Hashable, Sendable, CaseIterable {
        case gps = "GPS"
        case sbas = "SBAS"
        case galileo = "Galileo"
        case beidou = "BeiDou"
        case imes = "IMES"
        case qzss = "QZSS"
        case glonass = "GLONASS"
        case navic = "NavIC"

        /// gpsd's `gnssid` 0…7; nil for anything else.
        public init?(gnssid: Int) {
            switch gnssid {
            case 0: self = .gps
            case 1: self = .sbas
            case 2: self = .galileo
            case 3: self = .beidou
            case 4: self = .imes
            case 5: self = .qzss
            case 6: self = .glonass
            case 7: self = .navic
            default: return nil
            }
        }
    }

    public struct Satellite: Hashable, Sendable {
        /// gpsd's `PRN` (NMEA 2.x–4.0 numbering, which differs by receiver).
        public var prn: Int
        /// nil when gpsd gave no `gnssid`/`svid` (its `svid` 0 means "not known").
        public var constellation: Constellation?
        /// The satellite's number within its constellation (gpsd `svid`).
        public var svid: Int?
        /// Degrees above the horizon, −90…90.
        public var elevation: Double?
        /// Degrees from true north, 0…360.
        public var azimuth: Double?
        /// Signal strength (C/N0), dB-Hz.
        public var signal: Double?
        /// Whether the receiver used it in the solution.
        public var used: Bool

        public init(
            prn: Int, constellation: Constellation? = nil, svid: Int? = nil, elevation: Double? = nil,
            azimuth: Double? = nil, signal: Double? = nil, used: Bool = false
        ) {
            self.prn = prn
            self.constellation = constellation
            self.svid = svid
            self.elevation = elevation
            self.azimuth = azimuth
            self.signal = signal
            self.used = used
        }
    }

    /// Dilutions of precision; each nil when not reported.
    public struct Dilutions: Hashable, Sendable {
        public var hdop: Double?
        public var vdop: Double?
        public var pdop: Double?
        public var tdop: Double?
        public var gdop: Double?
        public var xdop: Double?
        public var ydop: Double?

        public init(
            hdop: Double? = nil, vdop: Double? = nil, pdop: Double? = nil, tdop: Double? = nil,
            gdop: Double? = nil, xdop: Double? = nil, ydop: Double? = nil
        ) {
            self.hdop = hdop
            self.vdop = vdop
            self.pdop = pdop
            self.tdop = tdop
            self.gdop = gdop
            self.xdop = xdop
            self.ydop = ydop
        }
    }

    /// Satellites in view (gpsd `nSat`; counted from the list when gpsd does not send it).
    public var visible: Int
    /// Satellites used in the solution (gpsd `uSat`; counted likewise).
    public var used: Int
    public var dilutions: Dilutions
    /// In gpsd's order.
    public var satellites: [Satellite]
    /// The receiver's device path, as gpsd names it.
    public var device: String?
    /// The report's own time, when gpsd gave one.
    public var timestamp: FixTime?
    /// Wall-clock time at which aklocd received the report.
    public var receivedAt: FixTime?

    public init(
        visible: Int, used: Int, dilutions: Dilutions = Dilutions(), satellites: [Satellite] = [],
        device: String? = nil, timestamp: FixTime? = nil, receivedAt: FixTime? = nil
    ) {
        self.visible = visible
        self.used = used
        self.dilutions = dilutions
        self.satellites = satellites
        self.device = device
        self.timestamp = timestamp
        self.receivedAt = receivedAt
    }

    /// Whether `other` shows the same sky: the same counts, dilutions and
    /// satellites, whatever its times. A change event is due only when not.
    public func sameSky(as other: SkyView) -> Bool {
        visible == other.visible && used == other.used && dilutions == other.dilutions
            && satellites == other.satellites && device == other.device
    }
}
