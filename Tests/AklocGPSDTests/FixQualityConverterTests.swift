import AklocCore
import AklocGPSD
import Testing

/// TPV `status` and SKY reports, converted without a gpsd.
@Suite struct FixQualityConverterTests {
    static func fix(_ report: TPVReport) -> Location? {
        guard case .fix(let location) = TPVConverter.convert(report) else {
            Issue.record("expected a fix")
            return nil
        }
        return location
    }

    @Test(arguments: [
        (1, FixStatus.plain), (2, .dgps), (3, .rtkFixed), (4, .rtkFloat), (5, .deadReckoning),
        (6, .gnssDeadReckoning), (7, .timeOnly), (8, .simulated), (9, .pyCode),
    ])
    func everyGpsdStatusHasItsCase(status: Int, expected: FixStatus) {
        var report = TPVConverterTests.full
        report.status = status
        let location = Self.fix(report)
        #expect(location?.fixStatus == expected)
    }

    @Test(arguments: [10, -1, Int(Int32.max)])
    func anUnknownStatusIsNil(status: Int) {
        var report = TPVConverterTests.full
        report.status = status
        let location = Self.fix(report)
        #expect(location?.fixStatus == nil)
    }

    /// gpsd leaves `status` out of a plain fix; libgps reads that as 0.
    @Test func noStatusOrZeroIsAPlainFix() {
        var report = TPVConverterTests.full
        report.status = 0
        let zero = Self.fix(report)
        #expect(zero?.fixStatus == .plain)
        report.status = 3
        report.set.remove(.status)
        let unset = Self.fix(report)
        #expect(unset?.fixStatus == .plain)
    }

    /// Two satellites from ublox-neo-m9n-nmea as gpsd 3.22 sends them, one
    /// GLONASS one used, and a third that is garbage in every float.
    static let sky = SKYReport(
        hdop: 0.54, vdop: 0.83, pdop: 0.99, tdop: 1.37, gdop: 2.70, xdop: 0.66, ydop: 0.84,
        satellites: [
            .init(prn: 13, gnssid: 0, svid: 13, elevation: 22, azimuth: 62, ss: 23, used: true),
            .init(prn: 70, gnssid: 6, svid: 6, elevation: 45, azimuth: 300, ss: 31, used: true),
            .init(prn: 5, gnssid: 9, svid: 5, elevation: .nan, azimuth: 400, ss: -1, used: false),
            .init(prn: 200, gnssid: 3, svid: 0, elevation: 91, azimuth: -1, ss: .infinity, used: false),
        ],
        timeSeconds: 1_594_507_065, timeNanoseconds: 0, device: "/dev/pts/1")

    @Test func aSkyReportBecomesASkyView() {
        let received = FixTime(secondsSince1970: 1_764_500_000)
        let sky = SKYConverter.convert(Self.sky, receivedAt: received)
        #expect(sky.visible == 4)
        #expect(sky.used == 2)
        #expect(
            sky.dilutions
                == SkyView.Dilutions(hdop: 0.54, vdop: 0.83, pdop: 0.99, tdop: 1.37, gdop: 2.70, xdop: 0.66, ydop: 0.84)
        )
        #expect(sky.device == "/dev/pts/1")
        #expect(sky.timestamp == FixTime(secondsSince1970: 1_594_507_065))
        #expect(sky.receivedAt == received)
        #expect(
            sky.satellites == [
                .init(
                    prn: 13, constellation: .gps, svid: 13, elevation: 22, azimuth: 62, signal: 23, used: true),
                .init(
                    prn: 70, constellation: .glonass, svid: 6, elevation: 45, azimuth: 300, signal: 31, used: true),
                // An unknown gnssid has no constellation; NaN and out-of-range values are nil.
                .init(prn: 5, constellation: nil, svid: 5, used: false),
                // svid 0: gpsd says ignore the gnssid.
                .init(prn: 200, constellation: nil, svid: nil, used: false),
            ])
    }

    @Test func everyGnssidHasItsConstellation() {
        let names = (0...7).map { SkyView.Constellation(gnssid: $0)?.rawValue }
        #expect(names == ["GPS", "SBAS", "Galileo", "BeiDou", "IMES", "QZSS", "GLONASS", "NavIC"])
        #expect(SkyView.Constellation(gnssid: 8) == nil)
        #expect(SkyView.Constellation(gnssid: -1) == nil)
    }

    @Test func nonFiniteOrNegativeDilutionsAreNil() {
        var report = Self.sky
        report.hdop = .nan
        report.vdop = -1
        report.pdop = .infinity
        report.timeSeconds = 0
        let sky = SKYConverter.convert(report)
        #expect(sky.dilutions.hdop == nil && sky.dilutions.vdop == nil && sky.dilutions.pdop == nil)
        #expect(sky.dilutions.tdop == 1.37)
        #expect(sky.timestamp == nil)
        #expect(SKYConverter.convert(SKYReport()).visible == 0)
        #expect(SKYConverter.convert(SKYReport()).device == nil)
    }
}
