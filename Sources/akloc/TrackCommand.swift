import AklocCore
import AklocJSON
import AklocPosix
import AklocProtocol
import Glibc

/// `akloc track [stats] [--since WHEN] [--until WHEN] [--format F] [-o FILE] [--simplify M]`,
/// `akloc track clear [--before WHEN]`, `akloc track import FILE…`
struct TrackCommand: Command {
    static let name = "track"
    static let abstract = "Export the recorded track (GPX, GeoJSON, CSV, NDJSON), its statistics, or clear it"
    static let usage =
        "track [stats] [--since WHEN] [--until WHEN] [--format gpx|geojson|csv|ndjson] [-o FILE] [--simplify M]"
        + " | track clear [--before WHEN] | track import FILE…"
    static let details = """
        Arguments:
          stats           print distance, duration, moving time and max speed per segment instead
          clear           delete the recorded points received before --before, or all of them
                          (root or the admin group only)
          import FILE…    add the points of GPX 1.0/1.1 tracks, Google Takeout's Records.json or
                          the phone's Timeline.json export to the track (root or the admin group
                          only); points already there are skipped, GPX points without a time
                          are passed over and counted, and a bad file imports nothing (it is
                          named with the byte offset of the problem)

        Options:
          --since WHEN    start: a duration back from now (90m, 2h, 3d, 45s, 1w), an ISO 8601
                          date or time (2026-12-01, 2026-12-01T08:00Z, 2026-12-01T09:00+01:00)
                          or epoch seconds (default: 24 hours before --until)
          --until WHEN    end, in the same forms (default: now)
          --format F      gpx (default), geojson, csv or ndjson
          -o, --output FILE  write to FILE instead of standard output
          --simplify M    Douglas–Peucker simplification, tolerance M metres
          --before WHEN   with clear: keep the points received at or after WHEN (same forms
                          as --since; default: delete everything)

        Needs an "always" authorization or the admin group (docs/track.md). Times are when
        aklocd received each point; the exported time of a point is the receiver's own.
        """

    enum Format: String, CaseIterable {
        case gpx, geojson, csv, ndjson
    }

    enum Action: Equatable {
        case export
        case stats
        case clear
        case importFiles
    }

    static let exportOptions = ["--since", "--until", "--format", "-o", "--output", "--simplify"]
    static let clearOptions = ["--before"]

    var action = Action.export
    var since: FixTime?
    var until: FixTime?
    var before: FixTime?
    var format = Format.gpx
    var output: String?
    var simplify: Double?
    var files: [String] = []
    /// The options given, to check against the action.
    private var named: [String] = []

    init(arguments: [String]) throws(CLIError) {
        let scanner = try ArgumentScanner(arguments, options: Set(Self.exportOptions + Self.clearOptions))
        switch scanner.positionals {
        case []: break
        case ["stats"]: action = .stats
        case ["clear"]: action = .clear
        case let words where words.first == "import":
            action = .importFiles
            files = Array(words.dropFirst())
            guard !files.isEmpty else { throw .usage("track import needs at least one FILE") }
        default: throw .usage("track takes no arguments but 'stats', 'clear' or 'import FILE…'")
        }
        named = (Self.exportOptions + Self.clearOptions).filter { scanner.value($0) != nil }
        let now = TimeOption.now()
        since = try TimeOption.value(scanner, "--since", now: now)
        until = try TimeOption.value(scanner, "--until", now: now)
        before = try TimeOption.value(scanner, "--before", now: now)
        if let text = scanner.value("--format") {
            guard let chosen = Format(rawValue: text) else {
                throw .usage("--format must be gpx, geojson, csv or ndjson, not '\(text)'")
            }
            format = chosen
        }
        output = scanner.value("-o") ?? scanner.value("--output")
        simplify = try scanner.number("--simplify", unit: "metres")
    }

    func validate() throws(CLIError) {
        if let simplify, simplify > TrackQuery.maxSimplify {
            throw .usage("--simplify is at most \(Int(TrackQuery.maxSimplify)) metres")
        }
        if action == .clear, let option = named.first(where: Self.exportOptions.contains) {
            throw .usage("track clear takes only --before, not \(option)")
        }
        if action == .importFiles, let option = named.first {
            throw .usage("track import takes only files, not \(option)")
        }
        if action != .clear, let option = named.first(where: Self.clearOptions.contains) {
            throw .usage("\(option) applies to track clear")
        }
        if action == .stats, output != nil || format != .gpx {
            throw .usage("track stats prints a table: no --format or -o")
        }
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let connection = try DaemonConnection(path: context.socketPath, timeout: AklocCLI.replyTimeout)
        if action == .clear {
            _ = try connection.call(.clearTrack(before: before))
            Output.line(before.map { "cleared the track before \($0)" } ?? "cleared the track")
            return ExitCode.ok
        }
        if action == .importFiles {
            let summary = try TrackImportRun(files: files, connection: connection).run()
            let untimed =
                summary.untimed > 0 ? "; \(summary.untimed) points without a time were passed over" : ""
            Output.line(
                "imported \(summary.imported) of \(summary.points) points into \(summary.days) day(s); "
                    + "\(summary.skipped) were already in the track\(untimed)")
            return ExitCode.ok
        }
        let stats = action == .stats
        var query = TrackQuery(since: since, until: until, limit: TrackQuery.maxLimit, simplify: simplify)
        var sink: TrackExporter.Sink
        if stats {
            sink = .standardOutput
        } else if let output {
            sink = try .file(output)
        } else {
            sink = .standardOutput
        }
        var exporter = TrackExporter(format: format, sink: sink)
        var statistics = TrackStatistics()
        var progress = TrackProgress()
        repeat {
            let result = try connection.call(.track(query))
            guard let decoded = TrackPage(json: result) else {
                throw .failure("aklocd answered track with something that is not a page of points")
            }
            if stats {
                for point in decoded.points { statistics.add(point) }
            } else {
                try exporter.write(decoded.points)
            }
            progress.advance(by: decoded.points.count, bytes: exporter.bytesWritten)
            query.after = decoded.next
        } while query.after != nil
        progress.finish()
        if stats {
            Output.line(statistics.table(), newline: false)
        } else {
            try exporter.finish()
        }
        return ExitCode.ok
    }
}

/// `N points, X MB` on stderr while an export or an import runs longer than a second,
/// only when stderr is a terminal (a pipe or log gets nothing).
struct TrackProgress {
    private let started = TrackProgress.now()
    private let enabled = isatty(2) == 1
    private var points = 0
    private var shown = false

    mutating func advance(by count: Int, bytes: Int) {
        points += count
        guard enabled, Self.now() - started > 1 else { return }
        shown = true
        let line = Array("\r\u{1B}[K\(points) points, \(Formatting.fixed(Double(bytes) / 1e6, 1)) MB…".utf8)
        try? Syscall.writeAll(2, line)
    }

    func finish() {
        if shown {
            Output.error("\r\u{1B}[K\(points) points in \(Formatting.fixed(Self.now() - started, 1)) s")
        }
    }

    /// Seconds on the monotonic clock.
    private static func now() -> Double { Double(PosixClock.monotonic.nanoseconds()) / 1e9 }
}
