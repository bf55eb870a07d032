import AklocCore
import Testing

@testable import akloc

/// `akloc sky`'s picture, without a terminal: the table and the polar plot
/// for known satellites, in 80 × 24 and smaller.
struct SkyPictureTests {
    static let sky = SkyView(
        visible: 5, used: 3, dilutions: .init(hdop: 0.84, vdop: 1.03, pdop: 1.33),
        satellites: [
            .init(prn: 9, constellation: .gps, svid: 9, elevation: 90, azimuth: 0, signal: 31, used: true),
            .init(prn: 70, constellation: .glonass, svid: 6, elevation: 0, azimuth: 0, signal: 44, used: true),
            .init(prn: 12, constellation: .galileo, svid: 12, elevation: 0, azimuth: 90, signal: 20, used: false),
            .init(prn: 33, constellation: .sbas, svid: 120, elevation: 0, azimuth: 180, signal: 0, used: true),
            .init(prn: 200, constellation: nil, svid: nil, used: false),
        ],
        device: "/dev/ttyACM0", timestamp: FixTime(secondsSince1970: 1_594_507_065))

    @Test func fitsEightyByTwentyFourWithTableAndPlot() {
        let lines = SkyPicture(sky: Self.sky, location: nil, columns: 80, rows: 24).lines()
        #expect(lines.count <= 24)
        #expect(lines.allSatisfy { $0.count <= 80 }, "\(lines)")
        #expect(lines[0].hasPrefix("/dev/ttyACM0  3/5 used  HDOP 0.84  VDOP 1.03  PDOP 1.33  2020-07-11T22:37:45"))
        #expect(lines[1] == "no fix")
        #expect(lines[2].hasPrefix(SkyPicture.tableHeader))
        // Used first, then by signal; the one without a constellation is "?".
        let rows = lines.dropFirst(3).prefix(5).map { String($0.prefix(SkyPicture.tableWidth)) }
        #expect(
            rows == [
                "GLONASS   70    6   0   0  44 Y", "GPS        9    9  90   0  31 Y", "SBAS      33  120   0 180   0 Y",
                "Galileo   12   12   0  90  20 N", "?        200    -   -   -   - N",
            ])
    }

    @Test func thePlotPutsEachSatelliteWhereItIs() {
        let plot = SkyPicture(sky: Self.sky, location: nil, columns: 80, rows: 24).plot(radiusRows: 10)
        #expect(plot.count == 21)
        #expect(plot.allSatisfy { $0.count == 41 })
        func column(_ text: String, in row: Int) -> Int? {
            let line = Array(plot[row])
            let needle = Array(text)
            return (0...(line.count - needle.count)).first { Array(line[$0..<($0 + needle.count)]) == needle }
        }
        // The zenith at the centre, bracketed (used).
        #expect(column("[9]", in: 10) == 19)
        // North on the horizon: the top row, over the N; east at the right end; south at the bottom.
        #expect(column("[70]", in: 0) == 18)
        #expect(plot[10].hasSuffix("12"))
        #expect(column("[33]", in: 20) == 18)
        // West stays marked; the unknown direction is not drawn.
        #expect(plot[10].hasPrefix("W"))
        #expect(!plot.joined().contains("200"))
    }

    @Test func labelsNeverCoverEachOther() {
        let crowd = SkyView(
            visible: 3, used: 3,
            satellites: (1...3).map {
                .init(prn: $0, constellation: .gps, svid: $0, elevation: 45, azimuth: 90, signal: 30, used: true)
            })
        let plot = SkyPicture(sky: crowd, location: nil, columns: 80, rows: 24).plot(radiusRows: 10).joined()
        #expect(plot.contains("[1]") && plot.contains("[2]") && plot.contains("[3]"))
    }

    @Test func aFixLineAndSmallTerminals() {
        let location = Location(
            latitude: 44.068_843, longitude: -121.314_192, mode: .threeD, horizontalAccuracy: 4.7, fixStatus: .rtkFloat)
        let lines = SkyPicture(sky: Self.sky, location: location, columns: 80, rows: 24).lines()
        #expect(lines[1] == "3d RTK float  44.06884 N  121.31419 W  ±4.7 m")
        // Narrow: the table alone; short: as many rows as fit, the last says how many more.
        let narrow = SkyPicture(sky: Self.sky, location: nil, columns: 40, rows: 24).lines()
        #expect(narrow.allSatisfy { $0.count <= 40 } && !narrow.joined().contains("·"))
        let short = SkyPicture(sky: Self.sky, location: nil, columns: 80, rows: 6).lines()
        #expect(short.count == 6)
        #expect(short.last == "… 3 more")
        #expect(SkyPicture(sky: nil, location: nil, columns: 80, rows: 24).lines().first?.contains("waiting") == true)
    }
}
