import AklocCore
import AklocJSON

extension JSONWriter {
    /// `"YYYY-MM-DDTHH:MM:SS.mmmZ"`: the same text as `FixTime.iso8601`,
    /// written digit by digit (no intermediate strings: this is on the hot path).
    public mutating func time(_ time: FixTime) {
        let seconds = time.secondsSince1970
        let days = seconds >= 0 ? seconds / 86_400 : -((-seconds + 86_399) / 86_400)
        let secondOfDay = Int(seconds - days * 86_400)
        // H. Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        guard (0...9999).contains(year) else {
            string(time.iso8601)
            return
        }
        let millis = Int(time.nanoseconds / 1_000_000)
        bytes.append(UInt8(ascii: "\""))
        digits(Int(year), 4)
        bytes.append(UInt8(ascii: "-"))
        digits(month, 2)
        bytes.append(UInt8(ascii: "-"))
        digits(day, 2)
        bytes.append(UInt8(ascii: "T"))
        digits(secondOfDay / 3600, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay % 3600 / 60, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay % 60, 2)
        bytes.append(UInt8(ascii: "."))
        digits(millis, 3)
        bytes.append(UInt8(ascii: "Z"))
        bytes.append(UInt8(ascii: "\""))
    }

    @inline(__always) private mutating func digits(_ value: Int, _ width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }
}
