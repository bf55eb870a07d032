import AklocCore
import Testing

/// The one split of epoch seconds into a UTC day and a second of it, and the
/// month lengths, that ISO 8601 text, the wire writer, track day files,
/// POSIX zone rules and NMEA sentences share.
@Suite struct FixTimeCalendarTests {
    @Test(
        arguments: [
            (0, 0, 0), (86_399, 0, 86_399), (86_400, 1, 0), (-1, -1, 86_399), (-86_400, -1, 0),
            (-86_401, -2, 86_399), (1_796_083_200, 20_788, 0), (253_402_300_799, 2_932_896, 86_399),
        ] as [(Int64, Int64, Int64)])
    func daysAreFloored(seconds: Int64, day: Int64, second: Int64) {
        #expect(FixTime.day(ofSecondsSince1970: seconds) == (day, second))
        let time = FixTime(secondsSince1970: seconds, nanoseconds: 999_999_999)
        #expect(time.day == day && time.secondOfDay == second)
        #expect(
            FixTime.days(
                fromCivil: FixTime.civil(fromDays: day).0, FixTime.civil(fromDays: day).1,
                FixTime.civil(fromDays: day).2) == day)
    }

    @Test func theCivilDateOfADayRoundTrips() {
        for day in stride(from: Int64(-800_000), through: 3_000_000, by: 997) {
            let (year, month, dayOfMonth) = FixTime.civil(fromDays: day)
            #expect((1...12).contains(month) && (1...FixTime.daysInMonth(month, year: year)).contains(dayOfMonth))
            #expect(FixTime.days(fromCivil: year, month, dayOfMonth) == day)
        }
        #expect(FixTime.civil(fromDays: -1) == (1969, 12, 31))
    }

    @Test func monthLengths() {
        #expect(FixTime.daysInMonth(2, year: 2024) == 29 && FixTime.daysInMonth(2, year: 2026) == 28)
        #expect(FixTime.daysInMonth(2, year: 1900) == 28 && FixTime.daysInMonth(2, year: 2000) == 29)
        #expect(FixTime.daysInMonth(4, year: 2026) == 30 && FixTime.daysInMonth(12, year: 2026) == 31)
    }
}
