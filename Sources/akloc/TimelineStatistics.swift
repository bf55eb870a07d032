import AklocCore
import AklocJSON

/// `akloc timeline --stats`: days and nights in each country, distance per
/// day and per month, time at each saved place, by the local dates of where
/// things happened. A day counts for every country a visit or a trip of it
/// was in; a night for the country of the visit under way at 03:00 there.
struct TimelineStatistics {
    private(set) var days: [String: Set<Int64>] = [:]
    private(set) var nights: [String: Set<Int64>] = [:]
    private(set) var names: [String: String] = [:]
    private(set) var distanceByDay: [Int64: Double] = [:]
    private(set) var secondsAtPlace: [String: Double] = [:]

    /// The hour that makes a night's country.
    static let nightHour: Int64 = 3

    mutating func add(_ timeline: TimelineFetch, now: FixTime) {
        for visit in timeline.visits {
            let first = visit.localDay(visit.start).day
            let last = visit.localDay(visit.until(now)).day
            if let code = visit.countryCode {
                names[code] = visit.json["country"]?["name"]?.stringValue ?? code
                for day in first...last { days[code, default: []].insert(day) }
                for day in first...last {
                    let night = day * 86_400 + Self.nightHour * 3600 - Int64(visit.offset)
                    if visit.start.secondsSince1970 <= night, visit.until(now).secondsSince1970 >= night {
                        nights[code, default: []].insert(day)
                    }
                }
            }
            if let place = visit.json["place"]?.stringValue {
                secondsAtPlace[place, default: 0] += visit.seconds(until: now)
            }
        }
        for trip in timeline.trips {
            let first = trip.localDay(trip.start).day
            let last = trip.localDay(trip.until(now)).day
            for code in trip.json["countries"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
                names[code] = names[code] ?? code
                for day in first...last { days[code, default: []].insert(day) }
            }
            distanceByDay[first, default: 0] += trip.json["distance"]?.doubleValue ?? 0
        }
    }

    func text() -> String {
        var text = "Countries\n"
        if days.isEmpty { text += "  none known (no geo data, or no visits)\n" }
        for code in days.keys.sorted(by: { (days[$0]!.count, $1) > (days[$1]!.count, $0) }) {
            let dayCount = days[code]!.count
            let nightCount = nights[code]?.count ?? 0
            text +=
                "  \(code)  \(names[code] ?? code): \(dayCount) day\(dayCount == 1 ? "" : "s"), "
                + "\(nightCount) night\(nightCount == 1 ? "" : "s")\n"
        }
        var byMonth: [String: Double] = [:]
        for (day, metres) in distanceByDay { byMonth[String(TimelineEntry.date(day).prefix(7)), default: 0] += metres }
        text += "Distance per month\n"
        if byMonth.isEmpty { text += "  no trips\n" }
        for month in byMonth.keys.sorted() { text += "  \(month)  \(Formatting.fixed(byMonth[month]! / 1000, 1)) km\n" }
        text += "Distance per day\n"
        if distanceByDay.isEmpty { text += "  no trips\n" }
        for day in distanceByDay.keys.sorted() {
            text += "  \(TimelineEntry.date(day))  \(Formatting.fixed(distanceByDay[day]! / 1000, 1)) km\n"
        }
        text += "Time at saved places\n"
        if secondsAtPlace.isEmpty { text += "  none (no visit in a saved place)\n" }
        for place in secondsAtPlace.keys.sorted(by: { (secondsAtPlace[$0]!, $1) > (secondsAtPlace[$1]!, $0) }) {
            text += "  \(place)  \(TimelineEntry.duration(secondsAtPlace[place]!))\n"
        }
        return text
    }
}
