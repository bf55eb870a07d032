import AklocCore
import AklocProtocol
import Glibc

/// A calendar day in this machine's time zone (TZ, else /etc/localtime), as
/// `akloc map --day` names it: from its local midnight to the next, which is
/// 23 or 25 hours apart across a daylight-saving change.
struct LocalDay: Equatable, Sendable {
    var year: Int
    var month: Int
    var day: Int

    /// `YYYY-MM-DD`, a day that exists (the protocol's own date rule,
    /// `TrackTime`, as `akloc timeline DAY`); `option` names the option in the error.
    init(parsing text: String, option: String) throws(CLIError) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes.enumerated().allSatisfy({ $0.offset == 4 || $0.offset == 7 || (48...57).contains($0.element) }),
            text >= "1970"
        else { throw .usage("\(option) needs a day as YYYY-MM-DD (1970 or later), not '\(text)'") }
        guard let time = TrackTime.parse(text) else {
            throw .usage("\(option): \(text) is not a day of the calendar")
        }
        (year, month, day) = FixTime.civil(fromDays: time.day)
    }

    var text: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    /// Local midnight of this day and of the next, as epoch seconds.
    var range: (since: FixTime, until: FixTime) {
        (Self.midnight(year, month, day), Self.midnight(year, month, day + 1))
    }

    /// mktime normalises day 32 to the next month's first and finds the
    /// zone's offset (and daylight saving) of that date itself.
    private static func midnight(_ year: Int, _ month: Int, _ day: Int) -> FixTime {
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_isdst = -1
        return FixTime(secondsSince1970: Int64(mktime(&parts)))
    }
}
