import AklocCore
import AklocJSON
import AklocPosix
import AklocProtocol

/// The CLI's one time option (`--since`, `--until`, `--before` of `track`,
/// `--since` of `map`): a duration back from now, epoch seconds, or an
/// ISO 8601 date or time. The text forms are read by the protocol's own
/// rule for a time member (`TrackTime`), so the CLI refuses a date that does
/// not exist with the words the daemon would use.
enum TimeOption {
    /// For the help texts.
    static let forms =
        "a duration back from now (90m, 2h, 3d, 45s, 1w), an ISO 8601 date or time (2026-12-01, "
        + "2026-12-01T08:00Z, 2026-12-01T09:00+01:00) or epoch seconds"

    static let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]

    /// The option's time, or nil when it was not given.
    static func value(_ scanner: ArgumentScanner, _ option: String, now: Double) throws(CLIError) -> FixTime? {
        guard let text = scanner.value(option) else { return nil }
        return try parse(text, option: option, now: now)
    }

    /// `text` as a time; `now` is the wall clock in epoch seconds.
    static func parse(_ text: String, option: String, now: Double) throws(CLIError) -> FixTime {
        let value = try wire(text, option: option, now: now)
        let time: FixTime?
        do {
            time = try TrackTime.decode(value, field: String(option.drop { $0 == "-" }))
        } catch {
            throw .reply(error)
        }
        guard let time else { throw .usage("\(option) needs \(forms), not '\(text)'") }
        return time
    }

    /// A duration becomes epoch seconds; anything else that could be a time
    /// goes on as text for `TrackTime` to read.
    private static func wire(_ text: String, option: String, now: Double) throws(CLIError) -> JSONValue {
        if let seconds = Double(text), seconds.isFinite { return .double(seconds) }
        if let unit = text.last, let scale = units[unit], let amount = Double(text.dropLast()), amount.isFinite,
            amount >= 0
        {
            return .double(max(0, now - amount * scale))
        }
        guard text.count >= 10, text.first?.isNumber == true else {
            throw .usage("\(option) needs \(forms), not '\(text)'")
        }
        return .string(text)
    }

    /// The wall clock, epoch seconds.
    static func now() -> Double { Double(PosixClock.realtime.nanoseconds()) / 1e9 }
}
