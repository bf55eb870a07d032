import AklocCore

/// Turns a gpsd TPV report into a `Location`, or says why it is not one.
///
/// Every float passes two gates before it becomes an Optional: its `set` bit
/// (when libgps has one for it) and `isFinite`, because libgps leaves absent
/// fields as NaN and a bit alone has let stale values through in the past.
public enum TPVConverter {
    public enum Result: Hashable, Sendable {
        /// Mode 2 or 3 with a valid position.
        case fix(Location)
        /// Mode 0 (not seen) or 1 (no fix): the receiver talks but has no position.
        case noFix(device: String?)
        /// Nothing usable: no mode, an unknown mode, or a fix without a valid position.
        case unusable(reason: String)
    }

    /// gpsd writes no `status` for a plain fix, and libgps reads the absent
    /// member as 0 (`STATUS_NO_FIX`; checked against gpspipe on every shared
    /// capture): a TPV with a position and status 0, or none, is a plain
    /// fix. An explicit 0 cannot be told from an absent one. Values gpsd
    /// does not define are nil.
    static func fixStatus(_ report: TPVReport) -> FixStatus? {
        guard report.set.contains(.status), report.status != 0 else { return .plain }
        return FixStatus(gpsd: report.status)
    }

    public static func convert(_ report: TPVReport, receivedAt: FixTime? = nil) -> Result {
        let device = report.device.isEmpty ? nil : report.device
        guard report.set.contains(.mode) else { return .unusable(reason: "TPV without mode") }
        let mode: Location.Mode
        switch report.mode {
        case TPVReport.modeNotSeen, TPVReport.modeNoFix: return .noFix(device: device)
        case TPVReport.mode2D: mode = .twoD
        case TPVReport.mode3D: mode = .threeD
        default: return .unusable(reason: "TPV with unknown mode \(report.mode)")
        }
        guard report.set.contains(.latLon), report.latitude.isFinite, report.longitude.isFinite,
            abs(report.latitude) <= 90, abs(report.longitude) <= 180
        else { return .unusable(reason: "mode \(report.mode) TPV without a valid latitude/longitude") }

        func value(_ number: Double, _ bit: TPVReport.Mask) -> Double? {
            report.set.contains(bit) && number.isFinite ? number : nil
        }
        // Error estimates are magnitudes: a negative one is as meaningless as NaN.
        func accuracy(_ number: Double, _ bit: TPVReport.Mask?) -> Double? {
            guard bit.map({ report.set.contains($0) }) ?? true, number.isFinite, number >= 0 else { return nil }
            return number
        }
        var timestamp: FixTime?
        if report.set.contains(.time), report.timeSeconds != 0,
            (0..<1_000_000_000).contains(report.timeNanoseconds)
        {
            timestamp = FixTime(secondsSince1970: report.timeSeconds, nanoseconds: Int32(report.timeNanoseconds))
        }
        return .fix(
            Location(
                latitude: report.latitude, longitude: report.longitude, mode: mode,
                altitude: value(report.altMSL, .altitude),
                ellipsoidalAltitude: value(report.altHAE, .altitude),
                // libgps has no set bit for eph (HERR_SET means epx/epy), so
                // eph is gated on finiteness alone; gpsd sends NaN-free JSON
                // and libgps defaults a missing eph to NaN.
                horizontalAccuracy: accuracy(report.eph, nil),
                verticalAccuracy: accuracy(report.epv, .verticalError),
                speed: value(report.speed, .speed),
                speedAccuracy: accuracy(report.eps, .speedError),
                course: value(report.track, .track),
                courseAccuracy: accuracy(report.epd, .trackError),
                climb: value(report.climb, .climb),
                timestamp: timestamp, receivedAt: receivedAt, device: device,
                fixStatus: fixStatus(report)))
    }
}
