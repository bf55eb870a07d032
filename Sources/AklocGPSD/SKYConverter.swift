import AklocCore

/// Turns a gpsd SKY report into a `SkyView`: every float is kept only when
/// finite and in its range, as `TPVConverter` does for a TPV.
public enum SKYConverter {
    public static func convert(_ report: SKYReport, receivedAt: FixTime? = nil) -> SkyView {
        func dop(_ value: Double) -> Double? { value.isFinite && value >= 0 ? value : nil }
        let satellites = report.satellites.map { satellite in
            // gps.h: "ignore gnssid and sigid if svid is zero".
            let known = satellite.svid > 0
            return SkyView.Satellite(
                prn: satellite.prn,
                constellation: known ? SkyView.Constellation(gnssid: satellite.gnssid) : nil,
                svid: known ? satellite.svid : nil,
                elevation: satellite.elevation.isFinite && abs(satellite.elevation) <= 90 ? satellite.elevation : nil,
                azimuth: satellite.azimuth.isFinite && (0...360).contains(satellite.azimuth) ? satellite.azimuth : nil,
                signal: satellite.ss.isFinite && satellite.ss >= 0 ? satellite.ss : nil,
                used: satellite.used)
        }
        var timestamp: FixTime?
        if report.timeSeconds != 0, (0..<1_000_000_000).contains(report.timeNanoseconds) {
            timestamp = FixTime(secondsSince1970: report.timeSeconds, nanoseconds: Int32(report.timeNanoseconds))
        }
        return SkyView(
            // Counted from the list, as gpsd 3.25 counts its nSat and uSat:
            // libgps 3.22 does not read those members.
            visible: satellites.count, used: satellites.count { $0.used },
            dilutions: SkyView.Dilutions(
                hdop: dop(report.hdop), vdop: dop(report.vdop), pdop: dop(report.pdop), tdop: dop(report.tdop),
                gdop: dop(report.gdop), xdop: dop(report.xdop), ydop: dop(report.ydop)),
            satellites: satellites, device: report.device.isEmpty ? nil : report.device,
            timestamp: timestamp, receivedAt: receivedAt)
    }
}
