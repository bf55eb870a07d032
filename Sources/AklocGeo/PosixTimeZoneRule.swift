import AklocCore

/// A POSIX TZ rule as a TZif footer carries it (RFC 8536 §3.3), e.g.
/// "CET-1CEST,M3.5.0,M10.5.0/3" or "<+0330>-3:30": standard and daylight
/// names and offsets, and when daylight time starts and ends each year
/// (Mm.w.d, Jn or n, with times from -167 to 167 hours, as RFC 8536 allows).
public struct PosixTimeZoneRule: Hashable, Sendable {
    /// A day of the year on which daylight time starts or ends.
    public enum Day: Hashable, Sendable {
        /// Jn: 1...365, February 29 never counted.
        case julian(Int)
        /// n: 0...365, February 29 counted in leap years.
        case zeroBased(Int)
        /// Mm.w.d: month 1...12, week 1...5 (5 = last), weekday 0 (Sunday)...6.
        case monthWeekDay(month: Int, week: Int, weekday: Int)
    }

    public struct Transition: Hashable, Sendable {
        public var day: Day
        /// Seconds after local midnight (local standard time for the start,
        /// local daylight time for the end).
        public var time: Int

        public init(day: Day, time: Int) {
            self.day = day
            self.time = time
        }
    }

    public var standard: TimeZoneRules.LocalTime
    public var daylight: TimeZoneRules.LocalTime?
    public var start: Transition?
    public var end: Transition?

    /// Parses the rule, or nil when it is not one.
    public init?(_ text: String) {
        var scanner = Scanner(Array(text.utf8))
        guard let standardName = scanner.name(), let standardOffset = scanner.offset() else { return nil }
        standard = .init(secondsFromGMT: -standardOffset, abbreviation: standardName, isDaylightSavingTime: false)
        if scanner.atEnd {
            daylight = nil
            return
        }
        guard let daylightName = scanner.name() else { return nil }
        let defaultOffset = scanner.atEnd || scanner.peek == UInt8(ascii: ",")
        guard let daylightOffset = defaultOffset ? standardOffset - 3600 : scanner.offset() else { return nil }
        daylight = .init(secondsFromGMT: -daylightOffset, abbreviation: daylightName, isDaylightSavingTime: true)
        // No rule at all: RFC 8536 footers always have one; without it, standard time throughout.
        if scanner.atEnd { return }
        guard scanner.skip(UInt8(ascii: ",")), let start = scanner.transition(), scanner.skip(UInt8(ascii: ",")),
            let end = scanner.transition(), scanner.atEnd
        else { return nil }
        self.start = start
        self.end = end
    }

    public func localTime(at unixSeconds: Int64) -> TimeZoneRules.LocalTime {
        guard let daylight, let start, let end else { return standard }
        let seconds = Int(unixSeconds)
        let year = FixTime.civil(
            fromDays: FixTime.day(ofSecondsSince1970: unixSeconds + Int64(standard.secondsFromGMT)).day
        ).0
        // Around New Year the instant can fall in the neighbouring year's rule.
        for candidate in [year - 1, year, year + 1] {
            let begins = Self.instant(of: start, year: candidate) - standard.secondsFromGMT
            let ends = Self.instant(of: end, year: candidate) - daylight.secondsFromGMT
            if begins < ends {
                if seconds >= begins, seconds < ends { return daylight }
            } else {
                // Southern hemisphere: daylight time spans the New Year.
                let nextEnds = Self.instant(of: end, year: candidate + 1) - daylight.secondsFromGMT
                if seconds >= begins, seconds < nextEnds { return daylight }
            }
        }
        return standard
    }

    /// Seconds from 1970-01-01T00:00 (local) to the transition in `year`.
    static func instant(of transition: Transition, year: Int) -> Int {
        let january1 = days(year: year, month: 1, day: 1)
        let leap = FixTime.isLeapYear(year)
        let day: Int
        switch transition.day {
        case .julian(let n):
            day = january1 + n - 1 + (leap && n >= 60 ? 1 : 0)
        case .zeroBased(let n):
            day = january1 + n
        case .monthWeekDay(let month, let week, let weekday):
            let first = days(year: year, month: month, day: 1)
            let firstWeekday = (first % 7 + 7 + 4) % 7  // 1970-01-01 was a Thursday
            var dayOfMonth = 1 + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
            let length = FixTime.daysInMonth(month, year: year)
            while dayOfMonth > length { dayOfMonth -= 7 }
            day = first + dayOfMonth - 1
        }
        return day * 86_400 + transition.time
    }

    /// Days since 1970-01-01 of a date (AklocCore's calendar arithmetic).
    static func days(year: Int, month: Int, day: Int) -> Int {
        Int(FixTime.days(fromCivil: year, month, day))
    }

    /// A cursor over the rule's bytes.
    private struct Scanner {
        let bytes: [UInt8]
        var at = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { at == bytes.count }
        var peek: UInt8? { at < bytes.count ? bytes[at] : nil }

        mutating func skip(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            at += 1
            return true
        }

        /// Three or more letters, or anything but ">" between "<" and ">".
        mutating func name() -> String? {
            let start = at
            if skip(UInt8(ascii: "<")) {
                while let byte = peek, byte != UInt8(ascii: ">") { at += 1 }
                let name = String(decoding: bytes[(start + 1)..<at], as: UTF8.self)
                guard skip(UInt8(ascii: ">")), at - start >= 5 else { return nil }
                return name
            }
            while let byte = peek, (byte | 0x20) >= UInt8(ascii: "a"), (byte | 0x20) <= UInt8(ascii: "z") { at += 1 }
            guard at - start >= 3 else { return nil }
            return String(decoding: bytes[start..<at], as: UTF8.self)
        }

        mutating func number(maximum: Int) -> Int? {
            var value = 0
            var digits = 0
            while let byte = peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
                at += 1
                guard digits <= 3, value <= maximum else { return nil }
            }
            return digits > 0 ? value : nil
        }

        /// [+-]hh[:mm[:ss]] in seconds, hours up to `maxHours`.
        mutating func offset(maxHours: Int = 24) -> Int? {
            var sign = 1
            if skip(UInt8(ascii: "-")) {
                sign = -1
            } else {
                _ = skip(UInt8(ascii: "+"))
            }
            guard let hours = number(maximum: maxHours) else { return nil }
            var seconds = hours * 3600
            if skip(UInt8(ascii: ":")) {
                guard let minutes = number(maximum: 59) else { return nil }
                seconds += minutes * 60
                if skip(UInt8(ascii: ":")) {
                    guard let secs = number(maximum: 59) else { return nil }
                    seconds += secs
                }
            }
            return sign * seconds
        }

        mutating func transition() -> Transition? {
            let day: Day
            if skip(UInt8(ascii: "M")) {
                guard let month = number(maximum: 12), month >= 1, skip(UInt8(ascii: ".")),
                    let week = number(maximum: 5), week >= 1, skip(UInt8(ascii: ".")),
                    let weekday = number(maximum: 6)
                else { return nil }
                day = .monthWeekDay(month: month, week: week, weekday: weekday)
            } else if skip(UInt8(ascii: "J")) {
                guard let n = number(maximum: 365), n >= 1 else { return nil }
                day = .julian(n)
            } else {
                guard let n = number(maximum: 365) else { return nil }
                day = .zeroBased(n)
            }
            var time = 7200
            if skip(UInt8(ascii: "/")) {
                guard let seconds = offset(maxHours: 167) else { return nil }
                time = seconds
            }
            return Transition(day: day, time: time)
        }
    }
}
