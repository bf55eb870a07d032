import AklocTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `akloc-bench`: akloc measured side by side with gpsd in one run (DESIGN §7,
/// issue 7). `make bench` runs it in release and writes BENCHMARKS.md;
/// `--quick` is the small CI mode that checks the harness runs, not the numbers.
struct Options {
    var quick = false
    var output = "BENCHMARKS.md"
    var counts = [1, 64, 1_000, 10_000]
    var epochs = 30
    var cycle = 0.03
    var grace = 2.0
    var wakeWindow = 30.0
    var pausedSubscribers = 64
    var readyStarts = 7
    var engineSubscribers = 10_000
    var engineRounds = 1
    var log = Options.packageRoot + "/Tests/Fixtures/gpsd-logs/bundg_zeus_9.log"
    var check = Options.defaultCheckFile
    var aklocd = Options.binDirectory + "/aklocd"
    /// aklocd's `[geo] data-dir`: the repository's data, what `make install` ships.
    var dataDirectory = Options.packageRoot + "/data"
    var selfPath = Options.selfExecutable
    var command = ""
    /// Development runs: only the fan-out phases, no report beyond them.
    var latencyOnly = false
    /// Development runs: p50 / max of every measured epoch on stderr.
    var perEpoch = false
    /// Hand-written notes (markdown) placed after the findings.
    var notes: String?
    /// `--fleet N`: the fleet run instead of the fan-out benchmark.
    var fleet: Fleet.Settings?

    static let usage = """
        usage: akloc-bench [--quick] [--out FILE] [--counts 1,64,1000,10000] [--epochs N]
                           [--cycle S] [--wake-window S] [--ready-starts N] [--aklocd PATH] [--data-dir DIR]
                           [--log GPSD_LOG] [--chk GPSD_CHK] [--command TEXT] [--latency-only] [--per-epoch]
                           [--notes MARKDOWN]
               akloc-bench --fleet N [--broker nats|mosquitto] [--fleet-lines N] [--per-replay 50]
                           [--fleet-window S] [--drain S] [--out FILE] [--cycle S]
                           [--log GPSD_LOG] [--aklocd PATH] [--command TEXT]
               akloc-bench floor GPSD_PORT SOCKET_PATH   (the floor server; the harness starts it)
               akloc-bench libgps-floor GPSD_PORT SOCKET_PATH   (the floor reading gpsd through libgps;
                           bench/cpu-per-epoch.sh runs it)
               akloc-bench geo [--out FILE] [DATA_DIR]   (geo lookup times and pages touched)
               akloc-bench track [--out FILE] [--points N]  (recorder CPU per fix, export of N points to GPX)
        """

    /// The boat's expected gpsd output from the shared captures when present
    /// (not bundled: 844 KB), else the largest moving one bundled.
    static var defaultCheckFile: String {
        if let shared = GPSFake.sharedLogDirectory?.appendingPathComponent("bundg_zeus_9.log.chk"),
            FileManager.default.fileExists(atPath: shared.path)
        {
            return shared.path
        }
        return packageRoot + "/Tests/Fixtures/gpsd-logs/haicom-305N.log.chk"
    }

    static var selfExecutable: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    }
    static var binDirectory: String { URL(fileURLWithPath: selfExecutable).deletingLastPathComponent().path }
    static var packageRoot: String {
        // bench/akloc-bench/main.swift -> package root.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var rest = arguments[...]
        func value(_ name: String) throws -> String {
            guard let next = rest.popFirst() else { throw BenchError("\(name) needs a value\n\(usage)") }
            return next
        }
        func number(_ name: String) throws -> Double {
            guard let parsed = Double(try value(name)) else { throw BenchError("\(name): not a number\n\(usage)") }
            return parsed
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--quick":
                options.quick = true
                options.counts = [1, 8]
                options.epochs = 3
                options.cycle = 0.005
                options.grace = 0.5
                options.wakeWindow = 2
                options.pausedSubscribers = 4
                options.readyStarts = 2
                options.engineSubscribers = 200
            case "--out": options.output = try value(argument)
            case "--counts":
                options.counts = try value(argument).split(separator: ",").map {
                    guard let count = Int($0), count > 0 else { throw BenchError("--counts: bad count '\($0)'") }
                    return count
                }
            case "--epochs": options.epochs = Int(try number(argument))
            case "--cycle": options.cycle = try number(argument)
            case "--wake-window": options.wakeWindow = try number(argument)
            case "--ready-starts": options.readyStarts = Int(try number(argument))
            case "--aklocd": options.aklocd = try value(argument)
            case "--data-dir": options.dataDirectory = try value(argument)
            case "--log": options.log = try value(argument)
            case "--chk": options.check = try value(argument)
            case "--command": options.command = try value(argument)
            case "--latency-only": options.latencyOnly = true
            case "--per-epoch": options.perEpoch = true
            case "--notes": options.notes = try value(argument)
            case "--fleet":
                var settings = options.fleet ?? Fleet.Settings()
                settings.instances = Int(try number(argument))
                options.fleet = settings
            case "--per-replay":
                var settings = options.fleet ?? Fleet.Settings()
                settings.perReplay = Int(try number(argument))
                guard (1...60).contains(settings.perReplay) else {
                    throw BenchError("--per-replay: 1 to 60 (gpsd keeps 64 clients, gpsfake and gpspipe take two)")
                }
                options.fleet = settings
            case "--broker":
                var settings = options.fleet ?? Fleet.Settings()
                let name = try value(argument)
                guard let kind = FleetBroker.Kind(rawValue: name) else {
                    throw BenchError("--broker: nats or mosquitto, not '\(name)'")
                }
                settings.broker = kind
                options.fleet = settings
            case "--fleet-lines":
                var settings = options.fleet ?? Fleet.Settings()
                settings.lines = Int(try number(argument))
                guard (settings.lines ?? 0) > 0 else { throw BenchError("--fleet-lines: a number of lines > 0") }
                options.fleet = settings
            case "--fleet-window":
                var settings = options.fleet ?? Fleet.Settings()
                settings.window = try number(argument)
                options.fleet = settings
            case "--drain":
                var settings = options.fleet ?? Fleet.Settings()
                settings.drain = try number(argument)
                options.fleet = settings
            case "--help", "-h":
                print(usage)
                exit(0)
            default: throw BenchError("unknown argument '\(argument)'\n\(usage)")
            }
        }
        return options
    }
}

func progress(_ text: String) {
    FileHandle.standardError.write(Data("akloc-bench: \(text)\n".utf8))
}

func runBench(_ options: Options) throws {
    signal(SIGPIPE, SIG_IGN)
    let wall = Posix.monotonicNanos()
    // Two sockets per subscriber in this process at most, plus slack.
    let limit = Posix.raiseFileLimit(to: UInt64((options.counts.max() ?? 1) * 2 + 512))
    let machine = Machine.current()
    let phases = Phases(options: options)
    var rows: [LatencyRow] = []
    for count in options.counts {
        var row = LatencyRow(subscribers: count)
        progress("N=\(count): aklocd and direct gpsd clients")
        try phases.akloc(count, into: &row)
        progress("N=\(count): floor")
        try phases.floor(count, into: &row)
        rows.append(row)
        progress(Report.summary(row))
        for note in row.notes { progress("  \(note)") }
    }
    if options.latencyOnly { return }
    progress("wake-ups over \(options.wakeWindow) s")
    let wakeups = try phases.wakeups(pausedSubscribers: options.pausedSubscribers)
    progress("exec to READY=1, \(options.readyStarts) starts")
    let ready = try phases.ready(starts: options.readyStarts)
    progress("engine throughput, \(options.engineSubscribers) subscribers")
    let fixes = try EngineBench.fixes(fromCheckFile: options.check)
    let engine = try EngineBench.run(
        subscribers: options.engineSubscribers, fixes: options.quick ? Array(fixes.prefix(100)) : fixes,
        rounds: options.engineRounds)
    let report = Report(
        options: options, machine: machine, loadAfter: Machine.loadAverage(), fileLimit: limit, rows: rows,
        wakeups: wakeups, ready: ready, engine: engine,
        seconds: Double(Posix.monotonicNanos() - wall) / 1e9)
    var text = report.markdown()
    // A fleet run's section (make bench-fleet) stays until the next fleet run.
    if let existing = try? String(contentsOfFile: options.output, encoding: .utf8),
        let fleet = FleetReport.section(of: existing)
    {
        text = FleetReport.splice(fleet, into: text)
    }
    try text.write(toFile: options.output, atomically: true, encoding: .utf8)
    progress("wrote \(options.output) in \(Int(report.seconds)) s")
}

func runFleet(_ options: Options, _ settings: Fleet.Settings) throws {
    signal(SIGPIPE, SIG_IGN)
    // mosquitto and the daemons inherit it: the broker holds one socket per instance.
    Posix.raiseFileLimit(to: UInt64(settings.instances * 4 + 1024))
    // DaemonProcess starts the aklocd of AKLOC_BIN_DIR (else the one beside this program).
    setenv("AKLOC_BIN_DIR", URL(fileURLWithPath: options.aklocd).deletingLastPathComponent().path, 1)
    let machine = Machine.current()
    progress("fleet of \(settings.instances) into \(settings.broker.rawValue), load \(machine.load)")
    let result = try Fleet(options: options, settings: settings).run()
    let section = FleetReport(result: result, options: options, machine: machine).markdown()
    let existing = (try? String(contentsOfFile: options.output, encoding: .utf8)) ?? ""
    try FleetReport.splice(section, into: existing).write(toFile: options.output, atomically: true, encoding: .utf8)
    progress(
        "fleet: \(result.started) instances, \(result.arrived)/\(result.expected) fixes, "
            + "\(result.devicesComplete) devices complete, \(result.duplicates) duplicates, "
            + "PSS sum \(Report.mib(result.peakPssKiB)) MiB, RSS sum \(Report.mib(result.peakRssKiB)) MiB, broker "
            + result.brokerNodes.map { "\($0.name) PSS \(Report.mib($0.peakPssKiB)) MiB" }.joined(separator: ", ")
            + "; left: \(result.leftoverProcesses) processes, \(result.leftoverSegments) segments, "
            + "\(result.leftoverDirectories) folders; wrote \(options.output)")
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "floor" || arguments.first == "libgps-floor" {
    guard arguments.count == 3, let port = UInt16(arguments[1]) else {
        FileHandle.standardError.write(Data("\(Options.usage)\n".utf8))
        exit(64)
    }
    if arguments.first == "floor" { Floor.main(port: port, socketPath: arguments[2]) }
    Floor.libgpsMain(port: port, socketPath: arguments[2])
}
if arguments.first == "track" {
    TrackBench.main(Array(arguments.dropFirst()))
}
if arguments.first == "timeline" {
    TimelineBench.main(Array(arguments.dropFirst()))
}
if arguments.first == "import" {
    ImportBench.main(Array(arguments.dropFirst()))
}
if arguments.first == "geo" {
    GeoBench.main(arguments: Array(arguments.dropFirst()))
}
do {
    let options = try Options.parse(arguments)
    if let fleet = options.fleet {
        try runFleet(options, fleet)
    } else {
        try runBench(options)
    }
} catch {
    FileHandle.standardError.write(Data("akloc-bench: \(error)\n".utf8))
    exit(1)
}
