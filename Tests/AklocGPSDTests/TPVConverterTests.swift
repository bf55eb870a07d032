import AklocCore
import AklocGPSD
import Testing

@Suite struct TPVConverterTests {
    /// A complete 3D TPV as gpsd 3.22 reports one (haicom-305N replay).
    static let full = TPVReport(
        set: .fullFix, mode: TPVReport.mode3D, timeSeconds: 1_795_341_190, timeNanoseconds: 801_000_000,
        latitude: -27.210713333, longitude: 153.052005, altHAE: 45.2, altMSL: 3.0, eph: 142.5, epv: 634.8,
        track: 307.41, epd: 12.5, speed: 0.5, eps: 400.84, climb: -0.25, device: "/dev/pts/1")

    @Test func fullFixMapsEveryField() throws {
        let received = FixTime(secondsSince1970: 1_764_500_000, nanoseconds: 5)
        guard case .fix(let location) = TPVConverter.convert(Self.full, receivedAt: received) else {
            Issue.record("expected a fix")
            return
        }
        #expect(location.latitude == -27.210713333)
        #expect(location.longitude == 153.052005)
        #expect(location.mode == .threeD)
        #expect(location.altitude == 3.0)
        #expect(location.ellipsoidalAltitude == 45.2)
        #expect(location.horizontalAccuracy == 142.5)
        #expect(location.verticalAccuracy == 634.8)
        #expect(location.speed == 0.5)
        #expect(location.speedAccuracy == 400.84)
        #expect(location.course == 307.41)
        #expect(location.courseAccuracy == 12.5)
        #expect(location.climb == -0.25)
        #expect(location.timestamp == FixTime(secondsSince1970: 1_795_341_190, nanoseconds: 801_000_000))
        #expect(location.timestamp?.iso8601 == "2026-11-22T09:53:10.801Z")
        #expect(location.receivedAt == received)
        #expect(location.device == "/dev/pts/1")
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteFieldsAreOmitted(bad: Double) {
        var report = Self.full
        report.altHAE = bad
        report.altMSL = bad
        report.eph = bad
        report.epv = bad
        report.track = bad
        report.epd = bad
        report.speed = bad
        report.eps = bad
        report.climb = bad
        guard case .fix(let location) = TPVConverter.convert(report) else {
            Issue.record("expected a fix")
            return
        }
        #expect(
            location
                == Location(
                    latitude: report.latitude, longitude: report.longitude, mode: .threeD,
                    timestamp: location.timestamp, device: "/dev/pts/1", fixStatus: .plain))
    }

    @Test func unsetMaskBitsHideFiniteValues() {
        var report = Self.full
        report.set = [.mode, .latLon]
        guard case .fix(let location) = TPVConverter.convert(report) else {
            Issue.record("expected a fix")
            return
        }
        #expect(location.altitude == nil)
        #expect(location.ellipsoidalAltitude == nil)
        #expect(location.verticalAccuracy == nil)
        #expect(location.speed == nil)
        #expect(location.speedAccuracy == nil)
        #expect(location.course == nil)
        #expect(location.courseAccuracy == nil)
        #expect(location.climb == nil)
        #expect(location.timestamp == nil)
        // eph has no set bit of its own in libgps: finite is enough.
        #expect(location.horizontalAccuracy == 142.5)
    }

    @Test func negativeAccuraciesAreOmitted() {
        var report = Self.full
        report.eph = -1
        report.epv = -1
        report.eps = -0.5
        report.epd = -3
        guard case .fix(let location) = TPVConverter.convert(report) else {
            Issue.record("expected a fix")
            return
        }
        #expect(location.horizontalAccuracy == nil)
        #expect(location.verticalAccuracy == nil)
        #expect(location.speedAccuracy == nil)
        #expect(location.courseAccuracy == nil)
    }

    @Test(arguments: [TPVReport.modeNotSeen, TPVReport.modeNoFix])
    func modeZeroAndOneAreNoFix(mode: Int) {
        var report = Self.full
        report.mode = mode
        #expect(TPVConverter.convert(report) == .noFix(device: "/dev/pts/1"))
        report.device = ""
        #expect(TPVConverter.convert(report) == .noFix(device: nil))
    }

    @Test func twoDimensionalFix() {
        var report = Self.full
        report.mode = TPVReport.mode2D
        guard case .fix(let location) = TPVConverter.convert(report) else {
            Issue.record("expected a fix")
            return
        }
        #expect(location.mode == .twoD)
    }

    @Test func unusableReports() {
        var noMode = Self.full
        noMode.set.remove(.mode)
        #expect(isUnusable(noMode))
        var strangeMode = Self.full
        strangeMode.mode = 7
        #expect(isUnusable(strangeMode))
        var noLatLon = Self.full
        noLatLon.set.remove(.latLon)
        #expect(isUnusable(noLatLon))
        var nanLongitude = Self.full
        nanLongitude.longitude = .nan
        #expect(isUnusable(nanLongitude))
        var outOfRange = Self.full
        outOfRange.latitude = 91
        #expect(isUnusable(outOfRange))
    }

    @Test func badTimesAreOmitted() {
        var zero = Self.full
        zero.timeSeconds = 0
        var badNanos = Self.full
        badNanos.timeNanoseconds = 1_000_000_000
        for report in [zero, badNanos] {
            guard case .fix(let location) = TPVConverter.convert(report) else {
                Issue.record("expected a fix")
                continue
            }
            #expect(location.timestamp == nil)
        }
    }

    @Test func defaultReportIsUnusable() {
        #expect(isUnusable(TPVReport()))
    }

    private func isUnusable(_ report: TPVReport) -> Bool {
        if case .unusable = TPVConverter.convert(report) { return true }
        return false
    }
}
