import AklocCore
import CGPS

/// The fields of one gpsd SKY report that akloc uses, as plain Swift values.
///
/// It mirrors `gps_data_t.dop`, `skyview`, `skyview_time` and `dev.path`
/// one to one and does no checking: `SKYConverter` decides what is valid,
/// so tests can feed NaN and out-of-range values without a gpsd.
public struct SKYReport: Hashable, Sendable {
    public struct Satellite: Hashable, Sendable {
        public var prn: Int
        public var gnssid: Int
        public var svid: Int
        public var elevation: Double
        public var azimuth: Double
        public var ss: Double
        public var used: Bool

        public init(
            prn: Int, gnssid: Int = 0, svid: Int = 0, elevation: Double = .nan, azimuth: Double = .nan,
            ss: Double = .nan, used: Bool = false
        ) {
            self.prn = prn
            self.gnssid = gnssid
            self.svid = svid
            self.elevation = elevation
            self.azimuth = azimuth
            self.ss = ss
            self.used = used
        }
    }

    /// `xdop`, `ydop`, `pdop`, `hdop`, `vdop`, `tdop`, `gdop`: NaN when absent.
    public var hdop: Double
    public var vdop: Double
    public var pdop: Double
    public var tdop: Double
    public var gdop: Double
    public var xdop: Double
    public var ydop: Double
    public var satellites: [Satellite]
    /// `skyview_time`; zero seconds means gpsd gave no time.
    public var timeSeconds: Int64
    public var timeNanoseconds: Int64
    /// `dev.path`; empty when the SKY named no device.
    public var device: String

    public init(
        hdop: Double = .nan, vdop: Double = .nan, pdop: Double = .nan, tdop: Double = .nan,
        gdop: Double = .nan, xdop: Double = .nan, ydop: Double = .nan, satellites: [Satellite] = [],
        timeSeconds: Int64 = 0, timeNanoseconds: Int64 = 0, device: String = ""
    ) {
        self.hdop = hdop
        self.vdop = vdop
        self.pdop = pdop
        self.tdop = tdop
        self.gdop = gdop
        self.xdop = xdop
        self.ydop = ydop
        self.satellites = satellites
        self.timeSeconds = timeSeconds
        self.timeNanoseconds = timeNanoseconds
        self.device = device
    }
}

extension SKYReport {
    /// Copies the SKY fields out of libgps's state after `gps_read` returned a SKY line.
    init(_ data: UnsafePointer<gps_data_t>) {
        let dop = data.pointee.dop
        let count = max(0, min(Int(data.pointee.satellites_visible), Int(akloc_MAXCHANNELS)))
        let satellites = withUnsafeBytes(of: data.pointee.skyview) { raw in
            raw.bindMemory(to: satellite_t.self).prefix(count).map { satellite in
                Satellite(
                    prn: Int(satellite.PRN), gnssid: Int(satellite.gnssid), svid: Int(satellite.svid),
                    elevation: satellite.elevation, azimuth: satellite.azimuth, ss: satellite.ss,
                    used: satellite.used)
            }
        }
        self.init(
            hdop: dop.hdop, vdop: dop.vdop, pdop: dop.pdop, tdop: dop.tdop, gdop: dop.gdop, xdop: dop.xdop,
            ydop: dop.ydop, satellites: satellites,
            timeSeconds: Int64(data.pointee.skyview_time.tv_sec),
            timeNanoseconds: Int64(data.pointee.skyview_time.tv_nsec),
            device: cString(data.pointee.dev.path))
    }
}
