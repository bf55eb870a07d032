// ISO 8601 for FixTime without Foundation, so the core stays pure. Uses the
// proleptic Gregorian day-count algorithms of H. Hinnant's `chrono` papers.

extension FixTime: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let time = FixTime(iso8601: text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 UTC time: \(text)"))
        }
        self = time
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }
}

extension FixTime: CustomStringConvertible {
    public var description: String { iso8601 }

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, milliseconds as gpsd prints them.
    public var iso8601: String {
        let days = floorDiv(secondsSince1970, 86_400)
        let secondOfDay = secondsSince1970 - days * 86_400
        let (year, month, day) = FixTime.civil(fromDays: days)
        let millis = Int(nanoseconds / 1_000_000)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
            + "\(pad(Int(secondOfDay / 3600), 2)):\(pad(Int(secondOfDay % 3600 / 60), 2)):"
            + "\(pad(Int(secondOfDay % 60), 2)).\(pad(millis, 3))Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (UTC only, as gpsd sends).
    public init?(iso8601 text: String) {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard bytes.count >= 20, bytes.count <= 40, bytes[4] == 45, bytes[7] == 45,
            bytes[10] == 84, bytes[13] == 58, bytes[16] == 58, bytes.last == 90,
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var nanos = 0
        if bytes.count > 20 {
            guard bytes[19] == 46, bytes.count > 21 else { return nil }
            let fraction = bytes[20..<(bytes.count - 1)]
            guard fraction.count <= 9 else { return nil }
            for (index, byte) in fraction.enumerated() {
                guard byte >= 48, byte <= 57 else { return nil }
                var digit = Int(byte - 48)
                for _ in 0..<(8 - index) { digit *= 10 }
                nanos += digit
            }
        } else if bytes.count != 20 {
            return nil
        }
        let days = FixTime.days(fromCivil: year, month, day)
        self.init(
            secondsSince1970: days * 86_400 + Int64(hour * 3600 + minute * 60 + second),
            nanoseconds: Int32(nanos))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
    public static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = floorDiv(y, 400)
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse: (year, month, day) of a day count since 1970-01-01.
    public static func civil(fromDays days: Int64) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }
}

private func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
    a >= 0 ? a / b : -((-a + b - 1) / b)
}

private func pad(_ value: Int, _ width: Int) -> String {
    let text = String(value)
    return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
}
