// ISO 8601 for FixTime without Foundation, so the core stays pure, on the
// calendar of FixTime+Calendar.swift.

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
        let (year, month, day) = FixTime.civil(fromDays: self.day)
        let secondOfDay = self.secondOfDay
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
}

private func pad(_ value: Int, _ width: Int) -> String {
    let text = String(value)
    return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
}
