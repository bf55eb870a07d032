import AklocTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `akloc-bench import [--out BENCHMARKS.md] [--records N] [--gpx-points N]`
/// (issue 29): `akloc track import` of a generated Google Takeout
/// `Records.json` of N records (default 1 000 000) and then of a generated
/// GPX of M points (default 1 000 000) into a real aklocd, end to end: wall
/// time, the CLI's and aklocd's peak RSS and CPU, and how long aklocd took
/// to answer another client's `status` while the import ran. The files are
/// written here, in /tmp, and deleted afterwards (never committed).
enum ImportBench {
    static let begin = "<!-- akloc-bench import: begin -->"
    static let end = "<!-- akloc-bench import: end -->"

    struct Run {
        var file: String
        var bytes: Int
        var points: Int
        var summary: String
        var seconds: Double
        var cliPeakKiB: Int
        var cliCPU: Double
        var daemonCPU: Double
        var daemonPeakKiB: Int
        var statusReplies: Int
        var statusMaxMillis: Double
        var generateSeconds: Double
    }

    static func main(_ arguments: [String]) -> Never {
        var output: String?
        var records = 1_000_000
        var gpxPoints = 1_000_000
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? arguments[index + 1] : nil
            switch (arguments[index], value) {
            case ("--out", let file?): output = file
            case ("--records", let text?): records = Int(text) ?? records
            case ("--gpx-points", let text?): gpxPoints = Int(text) ?? gpxPoints
            default: fail("usage: akloc-bench import [--out FILE] [--records N] [--gpx-points N]")
            }
            index += 2
        }
        do {
            let loadBefore = loadAverage()
            let runs = try measure(records: records, gpxPoints: gpxPoints)
            let section = markdown(runs, load: (loadBefore, loadAverage()))
            print(section)
            if let output {
                let existing = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                try TrackBench.splice(section, into: existing, begin: begin, end: end).write(
                    toFile: output, atomically: true, encoding: .utf8)
            }
            exit(0)
        } catch {
            fail("\(error)")
        }
    }

    static func iso(_ seconds: Int64, millis: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec, Int32(millis))
    }

    /// Writes `path` a piece at a time, as the generators make it.
    final class Writer {
        let handle: FileHandle
        var buffer = ""
        private(set) var bytes = 0

        init(_ path: String) throws {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        }

        func add(_ text: String) throws {
            buffer += text
            if buffer.utf8.count > 1 << 20 { try flush() }
        }

        func flush() throws {
            let data = Data(buffer.utf8)
            bytes += data.count
            try handle.write(contentsOf: data)
            buffer = ""
        }

        func close() throws {
            try flush()
            try handle.close()
        }
    }

    /// A Takeout `Records.json` as Google writes it: one record every 25 s
    /// ending an hour ago, a wandering position, accuracy and altitude, and
    /// on every fifth record the activity guesses (skipped by the reader).
    static func takeout(_ path: String, records: Int, end: Int64) throws -> Int {
        let writer = try Writer(path)
        try writer.add("{\n  \"locations\": [")
        let first = end - Int64(records) * 25
        for index in 0..<records {
            let seconds = first + Int64(index) * 25
            let latitude = 520_000_000 + Int((sin(Double(index) / 5000) * 2_000_000).rounded()) + index % 37
            let longitude = 45_000_000 + Int((cos(Double(index) / 7000) * 3_000_000).rounded()) + index % 53
            var record = index == 0 ? "\n" : ",\n"
            record += "    {\n      \"latitudeE7\": \(latitude),\n      \"longitudeE7\": \(longitude),\n"
            record += "      \"accuracy\": \(5 + index % 40),\n      \"altitude\": \(index % 120),\n"
            if index % 5 == 0 {
                record += "      \"activity\": [{\n        \"activity\": [{\n          \"type\": \"STILL\",\n"
                record += "          \"confidence\": 77\n        }],\n"
                record += "        \"timestamp\": \"\(iso(seconds - 3, millis: 0))\"\n      }],\n"
            }
            record += "      \"source\": \"WIFI\",\n      \"deviceTag\": 1234567890,\n"
            record += "      \"timestamp\": \"\(iso(seconds, millis: Int64(index % 1000)))\"\n    }"
            try writer.add(record)
        }
        try writer.add("\n  ]\n}\n")
        try writer.close()
        return writer.bytes
    }

    /// A GPX 1.1 track at 1 Hz ending an hour ago, a segment an hour, with elevation.
    static func gpx(_ path: String, points: Int, end: Int64) throws -> Int {
        let writer = try Writer(path)
        try writer.add(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"akloc-bench\" "
                + "xmlns=\"http://www.topografix.com/GPX/1/1\">\n<trk><name>bench</name>\n<trkseg>\n")
        let first = end - Int64(points)
        for index in 0..<points {
            if index > 0, index % 3600 == 0 { try writer.add("</trkseg>\n<trkseg>\n") }
            let latitude = 48.0 + sin(Double(index) / 3000) * 0.2
            let longitude = 11.0 + Double(index % 86_400) * 0.000_05
            try writer.add(
                "<trkpt lat=\"\(String(format: "%.7f", latitude))\" lon=\"\(String(format: "%.7f", longitude))\">"
                    + "<ele>\(500 + index % 300).\(index % 10)</ele><time>\(iso(first + Int64(index), millis: 0))</time>"
                    + "</trkpt>\n")
        }
        try writer.add("</trkseg>\n</trk>\n</gpx>\n")
        try writer.close()
        return writer.bytes
    }

    static func measure(records: Int, gpxPoints: Int) throws -> [Run] {
        let daemon = try DaemonProcess(
            gpsdPort: FreePort.loopbackTCP(), config: "[track]\nretention-days = 36500\nmax-size = 8G\n")
        defer { daemon.stop() }
        let end = Int64(Date().timeIntervalSince1970) - 3600
        var runs: [Run] = []
        for (name, count) in [("Records.json", records), ("track.gpx", gpxPoints)] {
            let path = daemon.directory.appendingPathComponent(name).path
            let made = TrackBench.wallSeconds()
            let bytes =
                name.hasSuffix(".gpx")
                ? try gpx(path, points: count, end: end) : try takeout(path, records: count, end: end)
            let generateSeconds = TrackBench.wallSeconds() - made
            var run = try importing(path, into: daemon)
            run.bytes = bytes
            run.points = count
            run.generateSeconds = generateSeconds
            runs.append(run)
            try? FileManager.default.removeItem(atPath: path)
        }
        return runs
    }

    /// One `akloc track import FILE` against `daemon`, measured, while
    /// another connection asks `status` over and over.
    static func importing(_ path: String, into daemon: DaemonProcess) throws -> Run {
        let stdoutPath = path + ".out"
        let stderrPath = path + ".err"
        let daemonCPU0 = TrackBench.processCPU(daemon.process.pid)
        let prober = StatusProber(socketPath: daemon.socketPath)
        prober.start()
        let start = TrackBench.wallSeconds()
        let (status, usage) = try spawnAndWait(
            Binaries.akloc, ["--socket", daemon.socketPath, "track", "import", path], stdout: stdoutPath,
            stderr: stderrPath)
        let seconds = TrackBench.wallSeconds() - start
        let (replies, maxMillis) = prober.stop()
        let out = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw SocketClient.Failure(
                "akloc track import \(path): exit \(status): \((try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "")"
            )
        }
        func cpu(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return Run(
            file: FileManager.default.displayName(atPath: path), bytes: 0, points: 0,
            summary: out.trimmingCharacters(in: .whitespacesAndNewlines), seconds: seconds,
            cliPeakKiB: usage.ru_maxrss, cliCPU: cpu(usage.ru_utime) + cpu(usage.ru_stime),
            daemonCPU: TrackBench.processCPU(daemon.process.pid) - daemonCPU0,
            daemonPeakKiB: peakKiB(daemon.process.pid), statusReplies: replies, statusMaxMillis: maxMillis,
            generateSeconds: 0)
    }

    /// VmHWM of `pid`: the most it has been resident since it started.
    static func peakKiB(_ pid: pid_t) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
        }
        return 0
    }

    /// Runs `path` and waits with wait4, whose rusage has the child's own
    /// peak RSS (RUSAGE_CHILDREN would be the largest of all children so far).
    static func spawnAndWait(_ path: String, _ arguments: [String], stdout: String, stderr: String) throws -> (
        Int32, rusage
    ) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, path, &actions, nil, argv, environ)
        guard spawned == 0 else { throw SocketClient.Failure("cannot start \(path): \(spawned)") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(child, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw SocketClient.Failure("wait4: \(errno)") }
        }
        let exited = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (exited, usage)
    }

    /// Another client of the daemon during an import: `status` in a loop, the
    /// slowest reply kept (the import's steps must not hold it up for long).
    final class StatusProber: @unchecked Sendable {
        private let socketPath: String
        private let lock = NSLock()
        private var running = true
        private var replies = 0
        private var slowest = 0.0
        private let done = DispatchSemaphore(value: 0)

        init(socketPath: String) { self.socketPath = socketPath }

        func start() {
            Thread.detachNewThread { [self] in
                defer { done.signal() }
                guard let client = try? SocketClient.connect(path: socketPath) else { return }
                while lock.withLock({ running }) {
                    let asked = TrackBench.wallSeconds()
                    guard (try? client.request("status", timeout: 60)) != nil else { return }
                    let millis = (TrackBench.wallSeconds() - asked) * 1000
                    lock.withLock {
                        replies += 1
                        slowest = max(slowest, millis)
                    }
                    usleep(20_000)
                }
            }
        }

        func stop() -> (Int, Double) {
            lock.withLock { running = false }
            done.wait()
            return lock.withLock { (replies, slowest) }
        }
    }

    /// The 1, 5 and 15 minute load averages, as /proc/loadavg has them.
    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    static func markdown(_ runs: [Run], load: (String, String)) -> String {
        func f(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
        let date = ISO8601DateFormatter().string(from: Date())
        var rows = ""
        for run in runs {
            rows += """
                | `\(run.file)`: \(run.points) points, \(f(Double(run.bytes) / 1e6, 1)) MB (generated in \(f(run.generateSeconds, 1)) s) | \
                \(f(run.seconds, 1)) s (\(f(Double(run.points) / run.seconds / 1000, 0)) k points/s, \
                \(f(Double(run.bytes) / 1e6 / run.seconds, 1)) MB/s) | \(f(Double(run.cliPeakKiB) / 1024, 1)) MiB | \
                \(f(Double(run.daemonPeakKiB) / 1024, 1)) MiB | \(f(run.cliCPU, 1)) s / \(f(run.daemonCPU, 1)) s | \
                \(run.statusReplies), slowest \(f(run.statusMaxMillis, 0)) ms | \(run.summary) |

                """
        }
        return """
            \(begin)
            ## Track import (issue 29; `akloc-bench import`)

            `akloc-bench import`, run by `make bench` (\(date), this machine, shared, release build;
            load average \(load.0) at the start, \(load.1) at the end).
            Each file is generated in /tmp, imported with `akloc track import FILE` into a
            fresh aklocd (`retention-days = 36500`, `max-size = 8G`), and deleted. The GPX
            import goes into days the Takeout import has already filled, so it merges.

            | file | wall time | akloc peak RSS | aklocd peak RSS (since its start) | CPU akloc / aklocd | another client's `status` during it | akloc's summary |
            |---|---|---|---|---|---|---|
            \(rows)
            Peak RSS is the kernel's: akloc's from wait4's rusage, aklocd's its VmHWM
            after the import. Memory does not grow with the file: the CLI holds one
            1 MiB chunk and one record, aklocd one staging batch and, while merging, the
            imported points of the day at hand (a day of the 1 Hz GPX is 86 400 points,
            hence its higher peak). Wall time beyond the two CPU columns is waiting: the
            round trips of the batches and the machine's other load. A commit step writes
            about 20 000 records (a large day takes several), so the slowest `status`
            answer is one such step, or one `add` of about 1 000 points, plus the time the
            shared machine gave other processes.
            \(end)
            """
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("akloc-bench import: \(message)\n".utf8))
        exit(1)
    }
}
