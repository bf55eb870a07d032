import AklocCore
import AklocProtocol
import AklocTestSupport
import AklocTrack
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `akloc-bench track [--out BENCHMARKS.md] [--points N]` (issue 13): the
/// recorder's CPU per fix, in process on the real journal (fdatasync every
/// 5 fixes, as 5 s at 1 Hz), and an export of a synthetic journal of N
/// points (default 1 000 000) from a real aklocd to a GPX file through
/// `akloc track`, end to end. Its section of BENCHMARKS.md sits between two
/// markers, so `make bench` (which runs it after the main harness) replaces
/// only that.
enum TrackBench {
    static let begin = "<!-- akloc-bench track: begin -->"
    static let end = "<!-- akloc-bench track: end -->"

    static func main(_ arguments: [String]) -> Never {
        var output: String?
        var count = 1_000_000
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--out" where index + 1 < arguments.count:
                output = arguments[index + 1]
                index += 1
            case "--points" where index + 1 < arguments.count:
                count = Int(arguments[index + 1]) ?? count
                index += 1
            default:
                fail("usage: akloc-bench track [--out FILE] [--points N]")
            }
            index += 1
        }
        do {
            let recorder = try recorderCost()
            let export = try exportCost(points: count)
            let section = markdown(recorder, export, points: count)
            print(section)
            if let output {
                let existing = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                try splice(section, into: existing).write(toFile: output, atomically: true, encoding: .utf8)
            }
            exit(0)
        } catch {
            fail("\(error)")
        }
    }

    struct RecorderCost {
        var fixes: Int
        var recordedMicros: Double
        var wallMicros: Double
        var skippedMicros: Double
        var syncs: Int
        var bytesPerPoint: Double
    }

    struct ExportCost {
        var seconds: Double
        var bytes: Int
        var points: Int
        var daemonCPU: Double
        var cliCPU: Double
        var writeSeconds: Double
        var journalBytes: Int
    }

    static func location(_ index: Int, wall: FixTime) -> Location {
        // 10 m/s east at 52.5° N: every fix is 10 m on, past the 5 m filter.
        var location = Location(
            latitude: 52.5 + Double(index % 100) * 1e-7, longitude: 13.4 + Double(index) * 1.478e-4,
            altitude: 34.5 + Double(index % 50) / 10, horizontalAccuracy: 3.2, verticalAccuracy: 5.1, speed: 10.04,
            course: 89.9, climb: 0)
        location.timestamp = wall
        location.receivedAt = wall
        location.device = "/dev/ttyACM0"
        return location
    }

    static func cpuSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    static func wallSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    static func recorderCost() throws -> RecorderCost {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("akloc-track-bench-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var wall = FixTime(secondsSince1970: Int64(Date().timeIntervalSince1970))
        let start = wall
        let recorder = TrackRecorder(
            settings: TrackSettings(), directory: directory.path + "/track", log: { _, _ in },
            wallClock: { wall })
        try recorder.open()
        let fixes = 10_000
        var syncs = 0
        let cpu0 = cpuSeconds()
        let wall0 = wallSeconds()
        for index in 0..<fixes {
            wall = FixTime(secondsSince1970: start.secondsSince1970 + Int64(index))
            let now = Instant.seconds(Double(index))
            recorder.handle(.didUpdateLocation(location(index, wall: wall), afterTimeInterval: 1), at: now)
            if let due = recorder.syncDue, due <= now {
                recorder.syncIfDue(at: now)
                syncs += 1
            }
        }
        let cpu1 = cpuSeconds()
        let wall1 = wallSeconds()
        // Epochs the policy holds back cost only the segmenter.
        let skipped = 200_000
        for index in 0..<skipped {
            recorder.handle(
                .didUpdateLocation(location(0, wall: wall), afterTimeInterval: nil),
                at: .seconds(Double(fixes) + Double(index) * 1e-3))
        }
        let cpu2 = cpuSeconds()
        let bytes = recorder.store.totalBytes
        recorder.close()
        return RecorderCost(
            fixes: fixes, recordedMicros: (cpu1 - cpu0) / Double(fixes) * 1e6,
            wallMicros: (wall1 - wall0) / Double(fixes) * 1e6, skippedMicros: (cpu2 - cpu1) / Double(skipped) * 1e6,
            syncs: syncs, bytesPerPoint: Double(bytes) / Double(recorder.recorded))
    }

    static func exportCost(points: Int) throws -> ExportCost {
        // A port nothing listens on: aklocd keeps retrying gpsd and serves the track.
        let daemon = try DaemonProcess(
            gpsdPort: FreePort.loopbackTCP(), config: "[track]\nmax-size = 4G\n",
            extraArguments: [])
        defer { daemon.stop() }
        // The points of the last 20 hours, written as the recorder writes them.
        let now = Int64(Date().timeIntervalSince1970)
        let first = now - 20 * 3600
        let write0 = wallSeconds()
        let store = TrackStore(
            directory: daemon.stateDirectory + "/track", limits: TrackStore.Limits(maxSize: 4 << 30),
            log: { _, _ in })
        _ = try store.open(now: FixTime(secondsSince1970: now))
        for index in 0..<points {
            let nanos = Int64(index) * (20 * 3600 * 1_000_000_000 / Int64(points))
            let wall = FixTime(
                secondsSince1970: first + nanos / 1_000_000_000, nanoseconds: Int32(nanos % 1_000_000_000))
            try store.append(
                TrackPoint(location: location(index, wall: wall), segment: UInt64(1 + index / 50_000)),
                now: FixTime(secondsSince1970: now))
        }
        try store.sync()
        let journalBytes = store.totalBytes
        store.close()
        let writeSeconds = wallSeconds() - write0
        try daemon.restart()
        let output = daemon.directory.appendingPathComponent("track.gpx").path
        let daemonCPU0 = processCPU(daemon.process.pid)
        var usage0 = rusage()
        getrusage(Int32(RUSAGE_CHILDREN.rawValue), &usage0)
        let start = wallSeconds()
        let cli = try TestProcess(
            Binaries.akloc, ["--socket", daemon.socketPath, "track", "--since", "1d", "-o", output])
        guard cli.waitForExit(timeout: 600) == 0 else { throw SocketClient.Failure("akloc track: \(cli.stderr())") }
        let seconds = wallSeconds() - start
        var usage1 = rusage()
        getrusage(Int32(RUSAGE_CHILDREN.rawValue), &usage1)
        let daemonCPU = processCPU(daemon.process.pid) - daemonCPU0
        let bytes = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
        let text = try Data(contentsOf: URL(fileURLWithPath: output))
        let exported = text.withUnsafeBytes { raw -> Int in
            var count = 0
            let marker = Array("<trkpt ".utf8)
            var index = 0
            while index + marker.count <= raw.count {
                if raw[index] == marker[0], raw[index + 1] == marker[1], raw[index + 5] == marker[5] { count += 1 }
                index += 1
            }
            return count
        }
        func cpu(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        let cliCPU =
            cpu(usage1.ru_utime) + cpu(usage1.ru_stime) - cpu(usage0.ru_utime) - cpu(usage0.ru_stime)
        return ExportCost(
            seconds: seconds, bytes: bytes, points: exported, daemonCPU: daemonCPU, cliCPU: cliCPU,
            writeSeconds: writeSeconds, journalBytes: journalBytes)
    }

    /// utime + stime of `pid` in seconds, from /proc.
    static func processCPU(_ pid: pid_t) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func markdown(_ recorder: RecorderCost, _ export: ExportCost, points: Int) -> String {
        func f(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
        let date = ISO8601DateFormatter().string(from: Date())
        return """
            \(begin)
            ## Track recorder and export (issue 13)

            `akloc-bench track`, run by `make bench` after the harness above (\(date), this machine, shared).

            | what | result |
            |---|---|
            | recorder CPU per recorded fix (append + amortized fdatasync every 5 fixes, \(recorder.fixes) fixes) | \(f(recorder.recordedMicros, 1)) µs (wall \(f(recorder.wallMicros, 1)) µs, \(recorder.syncs) syncs) |
            | recorder CPU per epoch its policy holds back | \(f(recorder.skippedMicros, 2)) µs |
            | journal bytes per point | \(f(recorder.bytesPerPoint, 0)) |
            | export of \(points) points, aklocd → `akloc track -o FILE` (GPX 1.1), end to end | \(f(export.seconds, 2)) s, \(f(Double(export.bytes) / 1e6 / export.seconds, 1)) MB/s of GPX, \(f(Double(export.points) / export.seconds / 1000, 0)) k points/s |
            | GPX written | \(f(Double(export.bytes) / 1e6, 1)) MB, \(export.points) `<trkpt>` |
            | CPU during the export: aklocd / akloc | \(f(export.daemonCPU, 2)) s / \(f(export.cliCPU, 2)) s |
            | the synthetic journal | \(f(Double(export.journalBytes) / 1e6, 1)) MB in day files, written in \(f(export.writeSeconds, 1)) s |

            The recorder figure is measured in process (`TrackRecorder` on the real
            journal files in /tmp), not inside a running aklocd: the engine's throttle,
            which decides which epochs reach it, is measured in the harness above. The
            export goes through the real daemon and CLI over the Unix socket, pages of at
            most 512 KiB; aklocd's CPU is read from /proc, akloc's from its rusage.
            \(end)
            """
    }

    /// `text` with the part between `begin` and `end` (markers included)
    /// replaced by `section`, or `section` appended when there is none.
    static func splice(
        _ section: String, into text: String, begin: String = TrackBench.begin, end: String = TrackBench.end
    ) -> String {
        if let start = text.range(of: begin), let stop = text.range(of: end, range: start.upperBound..<text.endIndex) {
            return text.replacingCharacters(in: start.lowerBound..<stop.upperBound, with: section)
        }
        let body = text.hasSuffix("\n") || text.isEmpty ? text : text + "\n"
        return body + (body.isEmpty ? "" : "\n") + section + "\n"
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("akloc-bench track: \(message)\n".utf8))
        exit(1)
    }
}
