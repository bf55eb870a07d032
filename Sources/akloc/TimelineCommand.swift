import AklocCore
import AklocJSON
import AklocPosix
import AklocProtocol
import Glibc

/// `akloc timeline [DAY] [--since WHEN] [--until WHEN] [--json|--gpx|--geojson|--stats] [-o FILE]`:
/// the visits and trips of a day, or of a range (docs/timeline.md), each in
/// the local time of where it happened.
struct TimelineCommand: Command {
    static let name = "timeline"
    static let abstract = "Print the visits and trips of a day (or export them, or sum a year)"
    static let usage =
        "timeline [DAY] [--since WHEN] [--until WHEN] [--json | --gpx | --geojson | --stats] [-o FILE]"
    static let details = """
        Arguments:
          DAY             a day as YYYY-MM-DD (default: today): what happened on that date
                          where it happened, in that place's time zone

        Options:
          --since WHEN    instead of a day, from \(TimeOption.forms)
                          (default: 24 hours before --until)
          --until WHEN    the end, in the same forms (default: now)
          --json          the visits and trips as the daemon gives them (docs/protocol.md)
          --gpx           GPX 1.1: each visit a waypoint, each trip a track segment of its points
          --geojson       GeoJSON: each visit a Point, each trip a LineString of its points
          --stats         days and nights in each country, distance per day and per month, and
                          the time at each saved place (e.g. --stats --since 365d)
          -o, --output FILE  write to FILE instead of standard output

        Needs an "always" authorization or the admin group, as the track (docs/timeline.md).
        """

    enum Format: Equatable {
        case text, json, gpx, geojson, stats
    }

    /// Seconds to wait for each week of visits or trips.
    static let replyTimeout: Double = 120

    static let options = ["--since", "--until", "-o", "--output"]
    static let formatFlags: [(String, Format)] = [
        ("--json", .json), ("--gpx", .gpx), ("--geojson", .geojson), ("--stats", .stats),
    ]

    /// Days since 1970 (a date, not an instant).
    var day: Int64?
    var since: FixTime?
    var until: FixTime?
    var format = Format.text
    var output: String?
    private var formats: [String] = []
    private let now: Double

    init(arguments: [String]) throws(CLIError) {
        let scanner = try ArgumentScanner(
            arguments, options: Set(Self.options), flags: Set(Self.formatFlags.map(\.0)))
        now = TimeOption.now()
        let words = scanner.positionals
        guard words.count <= 1 else {
            throw .usage("timeline takes at most one DAY, not '\(words.joined(separator: " "))'")
        }
        if let text = words.first { day = try Self.day(text) }
        since = try TimeOption.value(scanner, "--since", now: now)
        until = try TimeOption.value(scanner, "--until", now: now)
        output = scanner.value("-o") ?? scanner.value("--output")
        for (flag, chosen) in Self.formatFlags where scanner.flag(flag) {
            formats.append(flag)
            format = chosen
        }
    }

    /// `YYYY-MM-DD` that exists, as days since 1970.
    static func day(_ text: String) throws(CLIError) -> Int64 {
        guard text.utf8.count == 10, let time = TrackTime.parse(text) else {
            throw .usage("DAY must be a date that exists, as YYYY-MM-DD (such as 2026-11-30), not '\(text)'")
        }
        return time.day
    }

    func validate() throws(CLIError) {
        if formats.count > 1 {
            throw .usage("\(formats.joined(separator: " and ")) cannot be combined: choose one")
        }
        if day != nil, since != nil || until != nil {
            throw .usage("give a DAY or --since/--until, not both")
        }
        if let since, let until, since > until {
            throw .usage("--since (\(since)) is after --until (\(until))")
        }
        if let since, until == nil, since.secondsSince1970 > Int64(now) + 60 {
            throw .usage("--since (\(since)) is in the future")
        }
        if format == .text || format == .stats, output != nil {
            throw .usage("-o applies to --json, --gpx and --geojson")
        }
    }

    /// The day asked for (today here by default) when no range is.
    var chosenDay: Int64? {
        if since != nil || until != nil { return nil }
        if let day { return day }
        let today = FixTime(secondsSince1970: Int64(now))
        return FixTime.day(
            ofSecondsSince1970: today.secondsSince1970 + Int64(TimelineEntry.machineOffset(at: today))
        ).day
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        // A week of history at 1 Hz is computed in seconds, not milliseconds.
        let connection = try DaemonConnection(path: context.socketPath, timeout: Self.replyTimeout)
        let nowTime = FixTime(secondsSince1970: Int64(now))
        let range: (since: FixTime, until: FixTime)
        if let day = chosenDay {
            // Wide enough for any zone (UTC-12 to UTC+14); each entry is then
            // kept when it overlaps the date where it happened.
            range = (
                FixTime(secondsSince1970: max(0, day * 86_400 - 14 * 3600)),
                FixTime(secondsSince1970: min(nowTime.secondsSince1970, (day + 1) * 86_400 + 12 * 3600))
            )
        } else {
            let until = until ?? nowTime
            range = (since ?? FixTime(secondsSince1970: max(0, until.secondsSince1970 - 86_400)), until)
        }
        var timeline = try TimelineFetch.fetch(range, connection: connection)
        if let day = chosenDay { timeline.keep(day: day, now: nowTime) }
        switch format {
        case .text:
            Output.line(timeline.text(day: chosenDay), newline: false)
        case .stats:
            var statistics = TimelineStatistics()
            statistics.add(timeline, now: nowTime)
            Output.line(statistics.text(), newline: false)
        case .json:
            try write(Array((timeline.json.jsonString + "\n").utf8))
        case .gpx, .geojson:
            let points = try TimelineFetch.points(timeline, connection: connection)
            let exporter = TimelineExporter(timeline: timeline, points: points)
            try write(format == .gpx ? exporter.gpx() : exporter.geojson())
        }
        return ExitCode.ok
    }

    private func write(_ bytes: [UInt8]) throws(CLIError) {
        guard let output else {
            Output.line(bytes: bytes)
            return
        }
        do {
            try AtomicFile.write(bytes, to: output, mode: 0o644)
        } catch {
            throw .failure("cannot write \(output): \(error)")
        }
    }
}
