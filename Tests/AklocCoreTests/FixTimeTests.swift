import AklocCore
import Foundation
import Testing

@Suite struct FixTimeTests {
    @Test(arguments: [
        "1970-01-01T00:00:00.000Z", "2006-09-16T19:41:01.000Z", "2026-11-30T15:09:11.123Z",
        "2000-02-29T23:59:59.999Z", "1900-03-01T00:00:00.000Z", "2038-01-19T03:14:08.000Z",
        "9999-12-31T23:59:59.999Z",
    ])
    func roundTrips(text: String) throws {
        let time = try #require(FixTime(iso8601: text))
        #expect(time.iso8601 == text)
        #expect(FixTime(iso8601: time.iso8601) == time)
    }

    @Test func agreesWithFoundation() throws {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let seconds = Int64.random(in: -2_000_000_000...5_000_000_000, using: &generator)
            let millis = Int32.random(in: 0..<1000, using: &generator)
            let time = FixTime(secondsSince1970: seconds, nanoseconds: millis * 1_000_000)
            let date = try #require(formatter.date(from: time.iso8601))
            #expect(Int64(date.timeIntervalSince1970.rounded(.down)) == seconds)
            #expect(formatter.string(from: date) == time.iso8601)
        }
    }

    @Test func acceptsFractionsOfAnyPrecision() throws {
        #expect(FixTime(iso8601: "2020-01-01T00:00:00Z") == FixTime(secondsSince1970: 1_577_836_800))
        #expect(
            FixTime(iso8601: "2020-01-01T00:00:00.5Z")
                == FixTime(secondsSince1970: 1_577_836_800, nanoseconds: 500_000_000))
        #expect(
            FixTime(iso8601: "2020-01-01T00:00:00.123456789Z")
                == FixTime(secondsSince1970: 1_577_836_800, nanoseconds: 123_456_789))
    }

    @Test(arguments: [
        "", "garbage", "2020-01-01", "2020-01-01T00:00:00", "2020-01-01T00:00:00+01:00", "2020-13-01T00:00:00Z",
        "2020-00-10T00:00:00Z", "2020-01-32T00:00:00Z", "2020-01-01T24:00:00Z", "2020-01-01T00:60:00Z",
        "2020-01-01 00:00:00Z", "2020-01-01T00:00:00.Z", "2020-01-01T00:00:00.1234567890Z", "20a0-01-01T00:00:00Z",
        "2020-01-01T00:00:00.12x4Z", "2020-01-01T00:00:00.000z", "-020-01-01T00:00:00Z",
    ])
    func rejectsGarbage(text: String) {
        #expect(FixTime(iso8601: text) == nil)
    }

    @Test func codableUsesISO8601AndRejectsGarbage() throws {
        let time = FixTime(secondsSince1970: 1_158_435_661, nanoseconds: 250_000_000)
        let data = try JSONEncoder().encode([time])
        #expect(String(decoding: data, as: UTF8.self) == #"["2006-09-16T19:41:01.250Z"]"#)
        #expect(try JSONDecoder().decode([FixTime].self, from: data) == [time])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([FixTime].self, from: Data(#"["yesterday"]"#.utf8))
        }
    }

    @Test func locationEncodingOmitsUnknownFields() throws {
        let location = Location(latitude: 1, longitude: 2, mode: .twoD, speed: 3)
        let json = String(decoding: try JSONEncoder().encode(location), as: UTF8.self)
        #expect(!json.contains("null"))
        #expect(!json.contains("altitude"))
        #expect(try JSONDecoder().decode(Location.self, from: Data(json.utf8)) == location)
    }
}
