import AklocCore
import AklocJSON

/// The times the `track` and `clearTrack` ops accept: epoch seconds (a JSON
/// number), or ISO 8601 text: `2026-12-01`, `2026-12-01T14:05`,
/// `2026-12-01T14:05:30.25Z`, `2026-12-01T15:05:30+01:00`. Text without a
/// zone is UTC, as aklocd has no time zone of its own.
public enum TrackTime {
    /// The latest instant accepted (year 9999), so arithmetic on it cannot overflow.
    public static let maxSeconds: Int64 = 253_402_300_799

    public static func parse(_ text: String) -> FixTime? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 10, bytes.count <= 40 else { return nil }
        var index = 0
        func digits(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<(index + count)] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            index += count
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = digits(4), expect(45), let month = digits(2), expect(45), let day = digits(2),
            (1...12).contains(month), (1...FixTime.daysInMonth(month, year: year)).contains(day)
        else { return nil }
        var seconds = FixTime.days(fromCivil: year, month, day) * 86_400
        var nanos = 0
        if index < bytes.count {
            guard expect(84) || expect(116) || expect(32), let hour = digits(2), expect(58), let minute = digits(2),
                hour < 24, minute < 60
            else { return nil }
            var second = 0
            if expect(58) {
                guard let value = digits(2), value < 61 else { return nil }
                second = value
                if expect(46) || expect(44) {
                    let start = index
                    while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 }
                    guard index > start, index - start <= 9 else { return nil }
                    var scale = 100_000_000
                    for byte in bytes[start..<index] {
                        nanos += Int(byte - 48) * scale
                        scale /= 10
                    }
                }
            }
            seconds += Int64(hour * 3600 + minute * 60 + second)
            if expect(90) || expect(122) {
                // UTC
            } else if index < bytes.count, bytes[index] == 43 || bytes[index] == 45 {
                let sign: Int64 = bytes[index] == 43 ? 1 : -1
                index += 1
                guard let hours = digits(2), hours <= 23 else { return nil }
                _ = expect(58)
                guard let minutes = digits(2), minutes < 60 else { return nil }
                seconds -= sign * Int64(hours * 3600 + minutes * 60)
            }
            guard index == bytes.count else { return nil }
        }
        guard seconds >= 0, seconds <= maxSeconds else { return nil }
        return FixTime(secondsSince1970: seconds, nanoseconds: Int32(nanos))
    }

    /// Epoch seconds (fractions allowed) as a time; nil when negative or past year 9999.
    public static func fromEpoch(_ value: Double) -> FixTime? {
        guard value.isFinite, value >= 0, value <= Double(maxSeconds) else { return nil }
        let whole = value.rounded(.down)
        return FixTime(secondsSince1970: Int64(whole), nanoseconds: Int32(((value - whole) * 1e9).rounded(.down)))
    }

    /// A time as a request member that `parse` reads back exactly: the
    /// wire's millisecond text, or nine fraction digits when the time has
    /// finer ones (a CLI's "2h ago" is not a whole millisecond).
    public static func write(_ time: FixTime, to writer: inout JSONWriter) {
        guard time.nanoseconds % 1_000_000 != 0 else { return writer.time(time) }
        var fraction = String(time.nanoseconds)
        fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
        writer.string(String(time.iso8601.dropLast(4)) + fraction + "Z")
    }
}
