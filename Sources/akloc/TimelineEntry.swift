import AklocCore
import AklocJSON
import AklocProtocol
import Glibc

/// One visit or trip of `akloc timeline`, as the `visits` and `trips` ops
/// give it (docs/protocol.md), with the offset of where it happened: a
/// visit's own time zone, a trip's from the visit it left (else the one it
/// reached); without geo data, this machine's.
struct TimelineEntry {
    enum Kind {
        case visit
        case trip
    }

    var kind: Kind
    var start: FixTime
    /// Nil for a visit under way (or a trip still on the move).
    var end: FixTime?
    /// Seconds east of UTC where it happened.
    var offset: Int
    /// The object as the daemon sent it.
    var json: JSONValue
    /// A visit under way: its newest fix the track holds (`TimelineFetch`).
    var lastSeen: FixTime?

    init?(visit json: JSONValue) {
        guard let arrival = json["arrival"]?.stringValue.flatMap(TrackTime.parse) else { return nil }
        kind = .visit
        start = arrival
        end = json["departure"]?.stringValue.flatMap(TrackTime.parse)
        offset = Self.offset(of: json, at: arrival)
        self.json = json
    }

    init?(trip json: JSONValue) {
        guard let start = json["start"]?.stringValue.flatMap(TrackTime.parse),
            let end = json["end"]?.stringValue.flatMap(TrackTime.parse)
        else { return nil }
        kind = .trip
        self.start = start
        // A trip that ends on the move (no `to` visit) is under way.
        self.end = json["to"] == .null || json["to"] == nil ? nil : end
        let visits = [json["from"], json["to"]].compactMap { $0 }.filter { $0 != .null }
        offset =
            visits.first { $0["timeZone"] != nil }.map { Self.offset(of: $0, at: start) }
            ?? Self.machineOffset(at: start)
        self.json = json
    }

    /// Where the entry ends for the sums: its end, or the newest time known.
    func until(_ now: FixTime) -> FixTime {
        if let end { return end }
        if let lastSeen { return lastSeen }
        if kind == .trip, let last = json["end"]?.stringValue.flatMap(TrackTime.parse) { return last }
        return now
    }

    /// Seconds from start to `until`.
    func seconds(until now: FixTime) -> Double {
        let end = until(now)
        return Double(end.secondsSince1970 - start.secondsSince1970)
            + Double(end.nanoseconds - start.nanoseconds) / 1e9
    }

    private static func offset(of json: JSONValue, at time: FixTime) -> Int {
        if let seconds = json["timeZone"]?["secondsFromGMT"]?.doubleValue { return Int(seconds) }
        return machineOffset(at: time)
    }

    /// This machine's offset at `time` (its TZ, as `date` prints).
    static func machineOffset(at time: FixTime) -> Int {
        var seconds = time_t(time.secondsSince1970)
        var parts = tm()
        localtime_r(&seconds, &parts)
        return parts.tm_gmtoff
    }

    /// The visit's place in words: the saved place, else near the nearest
    /// populated place, else its coordinate.
    var placeName: String {
        if let place = json["place"]?.stringValue { return place }
        if let placemark = json["placemark"], placemark != .null {
            let address = GeoFormatting.address(placemark)
            if !address.isEmpty { return "near \(address)" }
        }
        return Formatting.coordinate(
            latitude: json["coordinate"]?["latitude"]?.doubleValue ?? 0,
            longitude: json["coordinate"]?["longitude"]?.doubleValue ?? 0)
    }

    /// The country's alpha-2 code (a visit's).
    var countryCode: String? { json["country"]?["code"]?.stringValue }

    /// Days since 1970 of `time` where this happened, and the second of that day.
    func localDay(_ time: FixTime) -> (day: Int64, second: Int64) {
        let local = FixTime.day(ofSecondsSince1970: time.secondsSince1970 + Int64(offset))
        return (local.day, local.secondOfDay)
    }

    /// `2026-11-30`.
    static func date(_ day: Int64) -> String {
        let (year, month, dayOfMonth) = FixTime.civil(fromDays: day)
        return "\(year)-\(month < 10 ? "0" : "")\(month)-\(dayOfMonth < 10 ? "0" : "")\(dayOfMonth)"
    }

    /// `08:02` where it happened, with the date first when it is not `day`.
    func clock(_ time: FixTime, on day: Int64?) -> String {
        let (local, second) = localDay(time)
        let minutes = second / 60
        let text = "\(minutes / 60 < 10 ? "0" : "")\(minutes / 60):\(minutes % 60 < 10 ? "0" : "")\(minutes % 60)"
        return day == nil || local == day ? text : "\(Self.date(local)) \(text)"
    }

    /// `4 h 28 min`, `25 min`, `40 s`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(max(0, seconds).rounded())
        if whole < 60 { return "\(whole) s" }
        let minutes = (whole + 30) / 60
        if minutes < 60 { return "\(minutes) min" }
        if minutes < 1440 { return "\(minutes / 60) h \(minutes % 60) min" }
        return "\(minutes / 1440) d \(minutes % 1440 / 60) h \(minutes % 60) min"
    }

    /// One line of the day: `08:02–12:30  Home  4 h 28 min`,
    /// `12:30–12:55  14.2 km in 25 min, max 82 km/h`, `12:55–  near …`.
    func line(on day: Int64?) -> String {
        let times = "\(clock(start, on: day))–\(end.map { clock($0, on: day) } ?? "")"
        switch kind {
        case .visit:
            guard let end else { return "\(times)  \(placeName)" }
            return "\(times)  \(placeName)  \(Self.duration(Self.seconds(from: start, to: end)))"
        case .trip:
            let distance = json["distance"]?.doubleValue ?? 0
            let duration = json["duration"]?.doubleValue ?? 0
            let maxSpeed = (json["maxSpeed"]?.doubleValue ?? 0) * 3.6
            var text =
                "\(times)  \(Formatting.fixed(distance / 1000, 1)) km in \(Self.duration(duration)), "
                + "max \(Int(maxSpeed.rounded())) km/h"
            if json["unknownPath"] == .bool(true) { text += " (part of the way unknown)" }
            return text
        }
    }

    static func seconds(from start: FixTime, to end: FixTime) -> Double {
        Double(end.secondsSince1970 - start.secondsSince1970) + Double(end.nanoseconds - start.nanoseconds) / 1e9
    }
}
