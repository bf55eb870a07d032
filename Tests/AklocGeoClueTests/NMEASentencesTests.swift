import AklocCore
import Testing

@testable import AklocGeoClue

@Suite struct NMEASentencesTests {
    /// 2026-05-02T19:41:04.50Z.
    private let time = FixTime(secondsSince1970: 1_777_750_864, nanoseconds: 500_000_000)

    private func fields(_ sentence: Substring) -> [Substring] {
        sentence.dropFirst().split(separator: "*")[0].split(separator: ",", omittingEmptySubsequences: false)
    }

    @Test func eachEpochIsAGGAThenAnRMCWithValidChecksums() throws {
        let location = Location(
            latitude: 44.4352300, longitude: -71.6758933, altitude: 267.9, ellipsoidalAltitude: 238.9,
            horizontalAccuracy: 4.5, speed: 3.0119, course: 76.6, timestamp: time)
        let text = NMEASentences.epoch(location)
        #expect(text.hasSuffix("\r\n"))
        let sentences = text.split(separator: "\r\n")
        try #require(sentences.count == 2)
        for sentence in sentences {
            #expect(sentence.first == "$")
            let parts = sentence.dropFirst().split(separator: "*")
            try #require(parts.count == 2)
            let computed = NMEASentences.checksum(String(parts[0]))
            #expect(UInt8(parts[1], radix: 16) == computed, "\(sentence)")
            #expect(parts[1].count == 2)
        }
        let gga = fields(sentences[0])
        #expect(gga[0] == "GPGGA" && gga[1] == "194104.50")
        #expect(gga[2] == "4426.113800" && gga[3] == "N" && gga[4] == "07140.553598" && gga[5] == "W")
        #expect(gga[6] == "1" && gga[8] == "0.9" && gga[9] == "267.9" && gga[10] == "M" && gga[11] == "-29.0")
        let rmc = fields(sentences[1])
        #expect(rmc[0] == "GPRMC" && rmc[1] == "194104.50" && rmc[2] == "A")
        #expect(rmc[3] == "4426.113800" && rmc[5] == "07140.553598" && rmc[6] == "W")
        #expect(rmc[7] == "5.855" && rmc[8] == "76.60" && rmc[9] == "020526" && rmc[12] == "A")
    }

    @Test func positionsSurviveToATenthOfAMicrodegree() {
        for (latitude, longitude) in [
            (0.0, 0.0), (-33.8688197, 151.2092955), (89.9999999, -179.9999999), (1e-9, -1e-9),
        ] {
            let gga = fields(
                NMEASentences.gga(Location(latitude: latitude, longitude: longitude, timestamp: time))[...])
            func degrees(_ field: Substring, _ digits: Int, _ hemisphere: Substring, _ negative: Substring) -> Double {
                let value = Double(field.prefix(digits))! + Double(field.dropFirst(digits))! / 60
                return hemisphere == negative ? -value : value
            }
            #expect(abs(degrees(gga[2], 2, gga[3], "S") - latitude) < 1e-7, "\(gga)")
            #expect(abs(degrees(gga[4], 3, gga[5], "W") - longitude) < 1e-7, "\(gga)")
        }
    }

    @Test func unknownValuesAreEmptyFields() {
        let bare = Location(latitude: 1, longitude: 2, mode: .twoD)
        let gga = fields(NMEASentences.gga(bare)[...])
        #expect(gga.count == 15)
        #expect(gga[1] == "" && gga[7] == "" && gga[8] == "" && gga[9] == "" && gga[11] == "")
        let rmc = fields(NMEASentences.rmc(bare)[...])
        #expect(rmc.count == 13)
        #expect(rmc[1] == "" && rmc[7] == "" && rmc[8] == "" && rmc[9] == "")
    }

    @Test func theTimeFallsBackToReceipt() {
        let received = Location(latitude: 1, longitude: 2, receivedAt: FixTime(secondsSince1970: 86_399))
        #expect(fields(NMEASentences.rmc(received)[...])[1] == "235959.00")
        #expect(fields(NMEASentences.rmc(received)[...])[9] == "010170")
    }

    @Test func decimalsRoundWithoutExponents() {
        #expect(NMEASentences.decimal(1e-9, places: 1) == "0.0")
        #expect(NMEASentences.decimal(-0.04, places: 1) == "0.0")
        #expect(
            NMEASentences.decimal(-12.35, places: 1) == "-12.4" || NMEASentences.decimal(-12.35, places: 1) == "-12.3")
        #expect(NMEASentences.decimal(12_345_678.9, places: 2) == "12345678.90")
        #expect(NMEASentences.angle(179.99999999, degreeDigits: 3) == "17959.999999")
        #expect(NMEASentences.angle(179.9999999999, degreeDigits: 3) == "18000.000000")
    }
}
