import AklocCore
import AklocHTTP
import Glibc
import Testing

@testable import akloc

/// The day view's pure parts: the range `/day.geojson` accepts and the
/// local day of `--day`. The page itself is tested in Chromium
/// (Tests/Browser/test_map.py, test_9a).
struct MapDayTests {
    private func range(_ query: String) -> Result<(since: FixTime, until: FixTime), MapRoutes.BadQuery> {
        MapRoutes.dayRange(HTTPRequestHead(method: "GET", path: "/day.geojson", query: query))
    }

    private func problem(_ query: String) -> String? {
        if case .failure(let bad) = range(query) { return bad.message }
        return nil
    }

    @Test func aDayIsTwoWholeEpochSecondsAtMost48HoursApart() throws {
        let day = try range("since=1764543600&until=1764630000").get()
        #expect(day.since == FixTime(secondsSince1970: 1_764_543_600))
        #expect(day.until == FixTime(secondsSince1970: 1_764_630_000))
        // A day of 25 hours (the autumn change) and the 48-hour edge are days too.
        #expect((try? range("since=0&until=90000").get()) != nil)
        #expect((try? range("until=172800&since=0").get()) != nil)
    }

    @Test func badRangesNameTheParameter() {
        #expect(problem("") == "since is missing")
        #expect(problem("since=5") == "until is missing")
        #expect(problem("until=5") == "since is missing")
        #expect(problem("since=abc&until=5") == "since must be whole epoch seconds, not 'abc'")
        #expect(problem("since=1e3&until=5000") == "since must be whole epoch seconds, not '1e3'")
        #expect(problem("since=-1&until=5") == "since must be whole epoch seconds, not '-1'")
        #expect(problem("since=1.5&until=5") == "since must be whole epoch seconds, not '1.5'")
        #expect(problem("since=&until=5") == "since must be whole epoch seconds, not ''")
        #expect(problem("since=1&until=9999999999999") == "until must be whole epoch seconds, not '9999999999999'")
        #expect(problem("since=1&until=253402300800") == "until must be whole epoch seconds, not '253402300800'")
        #expect(problem("since=10&until=10") == "since must be before until")
        #expect(problem("since=10&until=5") == "since must be before until")
        #expect(problem("since=0&until=172801") == "until is more than 48 h after since")
        let long = String(repeating: "9", count: 5000)
        #expect(problem("since=\(long)&until=1")?.count ?? 0 < 100)  // the echo is cut short
    }

    @Test func localDaysParseAndRefuseDaysNotOnTheCalendar() throws {
        let day = try LocalDay(parsing: "2024-02-29", option: "--day")
        #expect([day.year, day.month, day.day] == [2024, 2, 29])
        #expect(day.text == "2024-02-29")
        for text in ["2025-02-29", "2026-13-01", "2026-00-10", "2026-04-31"] {
            #expect(throws: CLIError.self) { try LocalDay(parsing: text, option: "--day") }
        }
        for text in ["", "2026-1-01", "2026/01/01", "26-01-01", "2026-01-01T00:00", "1969-12-31", "２０２６-01-01"] {
            #expect(throws: CLIError.self, "\(text)") { try LocalDay(parsing: text, option: "--day") }
        }
    }

    /// Local midnights, under the zone of the test's own TZ: 23 and 25 hours
    /// across Europe's changes, 24 otherwise, and month ends roll over.
    @Test func aLocalDayRunsFromMidnightToMidnightInTheMachinesZone() throws {
        let saved = getenv("TZ").map { String(cString: $0) }
        defer {
            if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") }
            tzset()
        }
        setenv("TZ", "Europe/Amsterdam", 1)
        tzset()
        func hours(_ text: String) throws -> Int64 {
            let range = try LocalDay(parsing: text, option: "--day").range
            return (range.until.secondsSince1970 - range.since.secondsSince1970) / 3600
        }
        #expect(try hours("2026-03-29") == 23)
        #expect(try hours("2026-10-25") == 25)
        #expect(try hours("2026-12-31") == 24)
        // 2026-12-01 00:00 in Amsterdam (UTC+1) is 2026-11-30 23:00 UTC (`TZ=UTC date -d "2026-11-30 23:00" +%s`).
        #expect(try LocalDay(parsing: "2026-12-01", option: "--day").range.since.secondsSince1970 == 1_796_079_600)
        #expect(try LocalDay(parsing: "2026-12-31", option: "--day").range.until.secondsSince1970 == 1_798_758_000)
    }
}
