import AklocCore
import AklocProtocol
import AklocTestSupport
import AklocTimeline
import AklocTrack
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `akloc-bench timeline [--out BENCHMARKS.md] [--days N]` (issue 29): the
/// visit detector's CPU per fix, in process, on a day of stays with a
/// still receiver's jitter and drives, and on a walk (the detector's
/// dearest case: the candidate holds every fix since its window began); and the
/// timeline of a journal of N days (default 30) from a real aklocd through
/// `akloc timeline --json`, end to end. Its section of BENCHMARKS.md sits
/// between two markers.
enum TimelineBench {
    static let begin = "<!-- akloc-bench timeline: begin -->"
    static let end = "<!-- akloc-bench timeline: end -->"

    struct Detector {
        var fixes: Int
        var micros: Double
        var visits: Int
    }

    struct History {
        var days: Int
        var points: Int
        var journalBytes: Int
        var writeSeconds: Double
        /// `akloc timeline --json` over every day (asked a week at a time).
        var allMillis: Double
        var allDaemonCPU: Double
        var visits: Int
        var trips: Int
        /// `akloc timeline DAY` of one day in the middle.
        var dayMillis: Double
    }

    static func main(_ arguments: [String]) -> Never {
        var output: String?
        var days = 30
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--out" where index + 1 < arguments.count:
                output = arguments[index + 1]
                index += 1
            case "--days" where index + 1 < arguments.count:
                days = Int(arguments[index + 1]) ?? days
                index += 1
            default:
                TrackBench.fail("usage: akloc-bench timeline [--out FILE] [--days N]")
            }
            index += 1
        }
        do {
            let day = detectorCost(walking: false)
            let walk = detectorCost(walking: true)
            let history = try historyCost(days: days)
            let section = markdown(day, walk, history)
            print(section)
            if let output {
                let existing = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                try TrackBench.splice(section, into: existing, begin: begin, end: end).write(
                    toFile: output, atomically: true, encoding: .utf8)
            }
            exit(0)
        } catch {
            TrackBench.fail("\(error)")
        }
    }

    /// One day at `start`: home until 08:00 (a point every 5 s, metres of
    /// jitter), 30 min east at 15 m/s (every second), work until 17:00, back,
    /// home; or, `walking`, a day of walking at 1.4 m/s (every second).
    static func day(start: Int64, walking: Bool, seed: inout UInt64) -> [TimelineFix] {
        func jitter() -> Double {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(seed >> 33) / Double(1 << 31) * 12 - 6
        }
        let metre = 1 / 111_195.0
        var fixes: [TimelineFix] = []
        func add(_ second: Int64, _ east: Double, _ north: Double) {
            fixes.append(
                TimelineFix(
                    time: Double(start + second), latitude: 52.5 + north * metre,
                    longitude: 13.4 + east * metre / 0.6088, accuracy: 8))
        }
        if walking {
            for second in stride(from: Int64(0), to: 86_400, by: 1) {
                add(second, Double(second % 7200) * 1.4 + jitter(), jitter())
            }
            return fixes
        }
        for second in stride(from: Int64(0), to: 28_800, by: 5) { add(second, jitter(), jitter()) }
        for second in Int64(0)..<1800 { add(28_800 + second, Double(second) * 15, jitter()) }
        for second in stride(from: Int64(30_600), to: 61_200, by: 5) { add(second, 27_000 + jitter(), jitter()) }
        for second in Int64(0)..<1800 { add(61_200 + second, 27_000 - Double(second) * 15, jitter()) }
        for second in stride(from: Int64(63_000), to: 86_400, by: 5) { add(second, jitter(), jitter()) }
        return fixes
    }

    static func detectorCost(walking: Bool) -> Detector {
        var seed: UInt64 = 29
        var fixes: [TimelineFix] = []
        for index in 0..<(walking ? 3 : 10) {
            fixes += day(start: 1_780_000_000 + Int64(index) * 86_400, walking: walking, seed: &seed)
        }
        var detector = VisitDetector()
        var visits = 0
        let cpu0 = TrackBench.cpuSeconds()
        for fix in fixes {
            for event in detector.add(fix) { if case .arrived = event { visits += 1 } }
        }
        let cpu1 = TrackBench.cpuSeconds()
        return Detector(fixes: fixes.count, micros: (cpu1 - cpu0) / Double(fixes.count) * 1e6, visits: visits)
    }

    static func historyCost(days: Int) throws -> History {
        let daemon = try DaemonProcess(
            gpsdPort: FreePort.loopbackTCP(), config: "[track]\nmax-size = 4G\nretention-days = \(days + 30)\n",
            extraArguments: [])
        defer { daemon.stop() }
        let now = Int64(Date().timeIntervalSince1970)
        let first = (now / 86_400 - Int64(days)) * 86_400
        let write0 = TrackBench.wallSeconds()
        let store = TrackStore(
            directory: daemon.stateDirectory + "/track", limits: TrackStore.Limits(maxSize: 4 << 30),
            log: { _, _ in })
        _ = try store.open(now: FixTime(secondsSince1970: now))
        var seed: UInt64 = 30
        var points = 0
        for index in 0..<days {
            for fix in day(start: first + Int64(index) * 86_400, walking: false, seed: &seed) {
                let time = TimelineFix.fixTime(fix.time)
                let location = Location(
                    latitude: fix.latitude, longitude: fix.longitude, horizontalAccuracy: fix.accuracy,
                    timestamp: time, receivedAt: time)
                try store.append(
                    TrackPoint(location: location, segment: UInt64(1 + index)), now: FixTime(secondsSince1970: now))
                points += 1
            }
        }
        try store.sync()
        let journalBytes = store.totalBytes
        store.close()
        let writeSeconds = TrackBench.wallSeconds() - write0
        try daemon.restart()
        func run(_ arguments: [String]) throws -> (millis: Double, output: String) {
            let start = TrackBench.wallSeconds()
            let cli = try TestProcess(Binaries.akloc, ["--socket", daemon.socketPath, "timeline"] + arguments)
            guard cli.waitForExit(timeout: 900) == 0 else {
                throw SocketClient.Failure("akloc timeline: \(cli.stderr())")
            }
            return ((TrackBench.wallSeconds() - start) * 1000, cli.stdout())
        }
        let since = FixTime(secondsSince1970: first).iso8601
        let until = FixTime(secondsSince1970: first + Int64(days) * 86_400).iso8601
        let cpu0 = TrackBench.processCPU(daemon.process.pid)
        let all = try run(["--json", "--since", since, "--until", until])
        let cpu = TrackBench.processCPU(daemon.process.pid) - cpu0
        let json = try JSONSerialization.jsonObject(with: Data(all.output.utf8)) as? [String: Any]
        let middle = FixTime(secondsSince1970: first + Int64(days / 2) * 86_400).iso8601.prefix(10)
        let one = try run([String(middle)])
        return History(
            days: days, points: points, journalBytes: journalBytes, writeSeconds: writeSeconds,
            allMillis: all.millis, allDaemonCPU: cpu, visits: (json?["visits"] as? [Any])?.count ?? 0,
            trips: (json?["trips"] as? [Any])?.count ?? 0, dayMillis: one.millis)
    }

    static func markdown(_ day: Detector, _ walk: Detector, _ history: History) -> String {
        func f(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
        let date = ISO8601DateFormatter().string(from: Date())
        var load = [Double](repeating: 0, count: 3)
        _ = getloadavg(&load, 3)
        return """
            \(begin)
            ## Timeline (issue 29; `akloc-bench timeline`)

            `akloc-bench timeline`, run by `make bench` (\(date), this machine, shared; load average \
            \(f(load[0], 2)) \(f(load[1], 2)) \(f(load[2], 2)) at the end).

            | what | result |
            |---|---|
            | visit detection CPU per fix, days of stays and drives (\(day.fixes) fixes, \(day.visits) visits) | \(f(day.micros, 3)) µs |
            | visit detection CPU per fix, days of walking at 1.4 m/s (\(walk.fixes) fixes, \(walk.visits) visits) | \(f(walk.micros, 3)) µs |
            | timeline of a \(history.days)-day journal (\(history.points) points), `akloc timeline --json`, end to end | \(f(history.allMillis, 0)) ms (aklocd CPU \(f(history.allDaemonCPU * 1000, 0)) ms; \(history.visits) visits, \(history.trips) trips) |
            | one day of it, `akloc timeline DAY`, end to end | \(f(history.dayMillis, 0)) ms |
            | the synthetic journal | \(f(Double(history.journalBytes) / 1e6, 1)) MB in day files, written in \(f(history.writeSeconds, 1)) s |

            The detector is measured in process (`VisitDetector.add`, the one the
            live path and the history run); the walk is its dearest case, where the
            candidate stay holds every fix since its window began (up to 100 m of
            walking, each compared with the window's first only). The journal's days are
            home (a point every 5 s), 30 min of driving (every second), work, and
            back; the timeline goes through the real aklocd and CLI over the Unix
            socket, a week per request, each reading two days more for the visit
            under way at its start.
            \(end)
            """
    }
}
