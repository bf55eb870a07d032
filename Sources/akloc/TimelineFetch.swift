import AklocCore
import AklocJSON
import AklocProtocol

/// The visits and trips of a range, asked of aklocd a month at a time (the
/// ops' limit), each once: an entry that overlaps two requests is the same
/// entry (same arrival or start) in both.
struct TimelineFetch {
    var visits: [TimelineEntry] = []
    var trips: [TimelineEntry] = []
    var since: FixTime
    var until: FixTime

    /// The most one request asks for: a week, so each answer comes within
    /// the reply timeout and the daemon's queue is not held long by one
    /// client (it reads two days more than it is asked for).
    static let chunk: Int64 = 7 * 86_400

    static func fetch(_ range: (since: FixTime, until: FixTime), connection: DaemonConnection) throws(CLIError)
        -> TimelineFetch
    {
        var fetched = TimelineFetch(since: range.since, until: range.until)
        var start = range.since
        while true {
            let end = min(range.until, FixTime(secondsSince1970: start.secondsSince1970 + chunk))
            let query = TimelineQuery(since: start, until: end)
            try merge(connection.call(.visits(query)), "visits", into: &fetched.visits, TimelineEntry.init(visit:))
            try merge(connection.call(.trips(query)), "trips", into: &fetched.trips, TimelineEntry.init(trip:))
            guard end < range.until else { break }
            start = end
        }
        // A visit under way lasts, as far as the track knows, to its newest
        // fix: the last point of a page simplified to its ends.
        if let index = fetched.visits.lastIndex(where: { $0.end == nil }) {
            var query = TrackQuery(
                since: fetched.visits[index].start, until: range.until, limit: TrackQuery.maxLimit,
                simplify: TrackQuery.maxSimplify)
            repeat {
                guard let page = TrackPage(json: try connection.call(.track(query))) else {
                    throw .failure("aklocd answered track with something that is not a page of points")
                }
                if let last = page.points.last?.location {
                    fetched.visits[index].lastSeen = last.receivedAt ?? last.timestamp
                }
                query.after = page.next
            } while query.after != nil
        }
        return fetched
    }

    /// Adds one request's entries; one that an earlier request had (the
    /// same start) is replaced: the later request knows more of what was
    /// under way at the earlier one's end.
    private static func merge(
        _ result: JSONValue, _ member: String, into entries: inout [TimelineEntry],
        _ make: (JSONValue) -> TimelineEntry?
    ) throws(CLIError) {
        guard let list = result[member]?.arrayValue else {
            throw .failure("aklocd answered \(member) without a list of \(member)")
        }
        for json in list {
            guard let entry = make(json) else {
                throw .failure("aklocd answered \(member) with something it cannot read: \(json.jsonString)")
            }
            if let index = entries.lastIndex(where: { $0.start == entry.start }) {
                entries[index] = entry
            } else {
                entries.append(entry)
            }
        }
    }

    /// Keeps what overlaps `day` where it happened.
    mutating func keep(day: Int64, now: FixTime) {
        func overlaps(_ entry: TimelineEntry) -> Bool {
            entry.localDay(entry.start).day <= day && entry.localDay(entry.until(now)).day >= day
        }
        visits = visits.filter(overlaps)
        trips = trips.filter(overlaps)
    }

    /// Visits and trips in the order they happened.
    var entries: [TimelineEntry] {
        (visits + trips).sorted { ($0.start, $0.kind == .trip ? 1 : 0) < ($1.start, $1.kind == .trip ? 1 : 0) }
    }

    /// The text of `akloc timeline`: one line each; a line with the date
    /// where it happened whenever that changes (a range, or a day's entry
    /// that began the day before).
    func text(day: Int64?) -> String {
        let entries = entries
        guard !entries.isEmpty else { return "no visits or trips in that time\n" }
        var text = ""
        var shownDate: Int64?
        for entry in entries {
            let date = entry.localDay(entry.start).day
            if day == nil, date != shownDate {
                text += "\(TimelineEntry.date(date))\n"
                shownDate = date
            }
            text += entry.line(on: day ?? date) + "\n"
        }
        return text
    }

    /// `--json`: the range and the visits and trips as aklocd gave them.
    var json: JSONValue {
        [
            "since": .string(since.iso8601), "until": .string(until.iso8601),
            "visits": .array(visits.map(\.json)), "trips": .array(trips.map(\.json)),
        ]
    }

    /// The recorded points of the trips (for `--gpx` and `--geojson`),
    /// each trip's own, in order.
    static func points(_ timeline: TimelineFetch, connection: DaemonConnection) throws(CLIError) -> [[Location]] {
        var result: [[Location]] = []
        for trip in timeline.trips {
            let end = trip.json["end"]?.stringValue.flatMap(TrackTime.parse) ?? trip.start
            var query = TrackQuery(since: trip.start, until: end, limit: TrackQuery.maxLimit)
            var points: [Location] = []
            repeat {
                guard let page = TrackPage(json: try connection.call(.track(query))) else {
                    throw .failure("aklocd answered track with something that is not a page of points")
                }
                points += page.points.map(\.location)
                query.after = page.next
            } while query.after != nil
            result.append(points)
        }
        return result
    }
}
