import AklocCore
import Testing

@testable import akloc

/// The CLI's one time option, as `track` and `map` both read it.
struct TimeOptionTests {
    @Test func everyFormAndEveryRefusal() throws {
        func since(_ text: String, now: Double) throws -> Int64 {
            try TimeOption.parse(text, option: "--since", now: now).secondsSince1970
        }
        #expect(try since("24h", now: 100_000) == 13_600)
        #expect(try since("90m", now: 10_000) == 4_600)
        #expect(try since("1w", now: 1_000_000) == 395_200)
        #expect(try since("1.5h", now: 10_000) == 4_600)
        #expect(try since("3d", now: 0) == 0, "never before 1970")
        #expect(try since("1700000000", now: 0) == 1_700_000_000)
        #expect(try since("2026-12-01T10:00:00Z", now: 0) == 1_796_119_200)
        #expect(try since("2026-12-01", now: 0) == 1_796_083_200)
        for bad in ["", "h", "-2h", "yesterday", "2x", "2026-02-30", "9e99"] {
            #expect(throws: CLIError.self, "\(bad)") { try since(bad, now: 0) }
        }
    }

    @Test func trackAndMapReadTheSameForms() throws {
        // One parser for both commands: `akloc map --since 1w` was a usage error.
        for form in ["1w", "90m", "45s", "2026-12-01", "2026-12-01T08:00+01:00", "1700000000"] {
            let map = try #require(try MapCommand(arguments: ["--since", form]).since, "\(form)")
            let track = try #require(try TrackCommand(arguments: ["--since", form]).since, "\(form)")
            #expect(abs(map.secondsSince1970 - track.secondsSince1970) <= 5, "\(form)")
        }
    }
}
