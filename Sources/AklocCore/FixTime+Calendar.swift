// The proleptic Gregorian calendar of epoch seconds, without Foundation:
// H. Hinnant's day-count algorithms (`chrono`), and the one place akloc
// splits epoch seconds into a UTC day and a second of it.

extension FixTime {
    /// Days since 1970-01-01 (UTC) of the time: floored, so a second before
    /// 1970 falls on 1969-12-31, not on 1970-01-01.
    public var day: Int64 { Self.day(ofSecondsSince1970: secondsSince1970).day }

    /// Seconds since midnight (UTC), 0..<86 400.
    public var secondOfDay: Int64 { Self.day(ofSecondsSince1970: secondsSince1970).secondOfDay }

    /// Epoch seconds as a day since 1970-01-01 and the second within it.
    public static func day(ofSecondsSince1970 seconds: Int64) -> (day: Int64, secondOfDay: Int64) {
        let day = floorDiv(seconds, 86_400)
        return (day, seconds - day * 86_400)
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

    public static func isLeapYear(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    /// 28 to 31.
    public static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

private func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
    a >= 0 ? a / b : -((-a + b - 1) / b)
}
