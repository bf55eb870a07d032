import AklocCore
import AklocJSON

extension JSONWriter {
    /// `"YYYY-MM-DDTHH:MM:SS.mmmZ"`: the same text as `FixTime.iso8601`,
    /// written digit by digit (no intermediate strings: this is on the hot path).
    public mutating func time(_ time: FixTime) {
        let (days, second) = FixTime.day(ofSecondsSince1970: time.secondsSince1970)
        let secondOfDay = Int(second)
        let (year, month, day) = FixTime.civil(fromDays: days)
        guard (0...9999).contains(year) else {
            string(time.iso8601)
            return
        }
        let millis = Int(time.nanoseconds / 1_000_000)
        bytes.append(UInt8(ascii: "\""))
        digits(year, 4)
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
