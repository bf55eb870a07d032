import AklocPosix
import AklocTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// p50 / p99 / max of a set of added latencies, in nanoseconds.
struct Stats {
    var count: Int
    var p50: Int64
    var p99: Int64
    var max: Int64

    init?(_ samples: [Int64]) {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        count = sorted.count
        p50 = sorted[(sorted.count - 1) / 2]
        p99 = sorted[Swift.max(0, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
        max = sorted[sorted.count - 1]
    }
}

/// What one subscriber count measured.
struct LatencyRow {
    var subscribers: Int
    var epochs = 0
    var akloc: Stats?
    /// aklocd measured from the reference TPV from which a direct client has the fix aklocd
    /// delivers (the epoch's last TPV that changed one of its fields).
    var aklocSameFix: Stats?
    /// The epoch's first reference TPV to that one: the receiver's own split of the epoch.
    var splitTime: Stats?
    var aklocReceived = 0
    var aklocExpected = 0
    var aklocConnected = 0
    var gpsd: Stats?
    var gpsdAttempted = 0
    var gpsdAccepted = 0
    var gpsdReceived = 0
    var gpsdExpected = 0
    var floor: Stats?
    var floorReceived = 0
    var floorExpected = 0
    var floorEpochs = 0
    var aklocPeakKiB = 0
    /// VmHWM just before the geo lookups (the measured epochs done).
    var aklocPeakBeforeLookupsKiB = 0
    /// What `akloc where`'s two lookups answered, or why they failed.
    var geoLookups = ""
    var aklocResidentKiB = 0
    /// Proportional set size at the end (smaps_rollup): shared libraries split among their users.
    var aklocPssKiB = 0
    var aklocPrivateKiB = 0
    var aklocThreads = 0
    var gpsdPeakKiB = 0
    var floorPeakKiB = 0
    /// Reader wake-up lag for the reference TPV, in each phase.
    var aklocReaderLag: Stats?
    var floorReaderLag: Stats?
    var setupSeconds = 0.0
    var epochIntervalMillis = 0.0
    /// CPU time per epoch while measuring (ms), from schedstat.
    var aklocCPUMillis: Double?
    var gpsdCPUMillis: Double?
    var floorCPUMillis: Double?
    var notes: [String] = []
}

/// Counts a process's context switches over a window by sampling every
/// thread often: a thread that appears counts all its switches, one that
/// vanishes between samples counts one (its exit) beyond what was last seen.
struct SwitchCounter {
    let pid: pid_t
    private var last: [String: Int]
    private(set) var total = 0
    private(set) var threadsStarted = 0
    private(set) var threadsEnded = 0

    init(pid: pid_t) {
        self.pid = pid
        last = Posix.contextSwitches(pid)
    }

    mutating func sample() {
        let now = Posix.contextSwitches(pid)
        for (thread, count) in now {
            if let before = last[thread] {
                total += count - before
            } else {
                total += count
                threadsStarted += 1
            }
        }
        let ended = last.keys.filter { now[$0] == nil }.count
        total += ended
        threadsEnded += ended
        last = now
    }
}

struct WakeupResult {
    var window: Double
    var idleSwitches = 0
    var idleThreads = 0
    var idleThreadChurn = 0
    var pausedSwitches = 0
    var pausedThreads = 0
    var pausedThreadChurn = 0
    var pausedSubscribers = 0
    var idlePerSecond: Double { Double(idleSwitches) / window }
    var pausedPerSecond: Double { Double(pausedSwitches) / window }
}

struct ReadyResult {
    var samplesMillis: [Double]
    var median: Double {
        let sorted = samplesMillis.sorted()
        return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs the pieces that need real processes: gpsfake's gpsd, aklocd, the floor.
final class Phases {
    let options: Options
    let subscribeLine = "{\"id\":1,\"op\":\"startUpdatingLocation\",\"policy\":{\"minInterval\":0}}\n"

    init(options: Options) {
        self.options = options
    }

    private func log(_ text: String) {
        FileHandle.standardError.write(Data("akloc-bench: \(text)\n".utf8))
    }

    private func temporaryDirectory(_ name: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-bench-\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// aklocd on a private socket, state and config (the repository's geo
    /// data, as a package's aklocd has it), started with the soft
    /// RLIMIT_NOFILE systemd gives services (1024) so it must raise its own.
    private func startDaemon(
        gpsdPort: UInt16, in directory: URL, environment: [String: String] = [:], extraConfig: String = ""
    ) throws -> (TestProcess, String) {
        let socketPath = directory.appendingPathComponent("akloc.sock").path
        let configPath = directory.appendingPathComponent("akloc.conf").path
        try "[geo]\ndata-dir = \(options.dataDirectory)\n\(extraConfig)".write(
            toFile: configPath, atomically: true, encoding: .utf8)
        dropDataFromPageCache()
        let arguments = [
            "--socket", socketPath, "--gpsd", "127.0.0.1:\(gpsdPort)", "--config", configPath,
            "--state-dir", directory.appendingPathComponent("state").path, "--log-level", "warning",
        ]
        let process = try Posix.withSoftFileLimit(1024) {
            try TestProcess(options.aklocd, arguments, environment: environment)
        }
        return (process, socketPath)
    }

    /// Each aklocd starts with its data files out of the page cache, as after
    /// a boot where only aklocd reads them: aklocd maps them for random access
    /// (no read-ahead), so its lookups make resident only the pages they read.
    /// Files that something else has read whole (`cat data/*.bin`) would be
    /// mapped 64 KiB around each page instead (bench/NOTES.md).
    private func dropDataFromPageCache() {
        for file in ["places.bin", "borders.bin", "timezones.bin"] {
            let fd = open("\(options.dataDirectory)/\(file)", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
            close(fd)
        }
    }

    private func waitForSocket(_ path: String, process: TestProcess, timeout: Double = 15) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let fd = Posix.connectUnix(path) {
                // Read the greeting before closing, so the server's write does not fail.
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                var greeting = [UInt8](repeating: 0, count: 4096)
                if poll(&poller, 1, 5000) > 0 { _ = read(fd, &greeting, greeting.count) }
                close(fd)
                return
            }
            guard process.isRunning else {
                throw BenchError("\(process.executable) exited: \(process.stderr())")
            }
            usleep(5_000)
        }
        throw BenchError("\(path) not served within \(timeout) s")
    }

    private func startGPSFake() throws -> GPSFake {
        try GPSFake.start(log: options.log, cycle: options.cycle)
    }

    /// CPU per epoch of each pid over `body` (ms), counting the reference's epochs.
    private func cpuPerEpoch(_ pids: [pid_t?], _ reader: Reader, _ body: () -> Void) -> [Double?] {
        let before = pids.map { $0.map(Posix.cpuNanos) }
        let epochsBefore = reader.referenceArrival.count
        body()
        let epochs = reader.referenceArrival.count - epochsBefore
        return zip(pids, before).map { pid, start in
            guard let pid, let start, epochs > 0 else { return nil }
            return Double(Posix.cpuNanos(pid) - start) / 1e6 / Double(epochs)
        }
    }

    /// `akloc where`'s two calls, which DESIGN §7 makes before the
    /// one-subscriber peak is read: `reverseGeocode` of the current fix, then
    /// `countries` for the placemark's country. Returns what they answered;
    /// throws if either failed (the peak would then be without them).
    private func geoLookups(_ socketPath: String) throws -> String {
        let client = try SocketClient.connect(path: socketPath)
        _ = try client.readMessage()
        let geocoded = try client.request("reverseGeocode")
        guard geocoded["ok"] as? Bool == true, let result = geocoded["result"] as? [String: Any],
            let placemark = result["placemark"] as? [String: Any]
        else { throw BenchError("reverseGeocode failed: \(geocoded)") }
        let address = placemark["formattedAddress"] as? String ?? "?"
        guard let code = placemark["isoCountryCode"] as? String else { return "\(address) (no country: at sea)" }
        let answer = try client.request("countries", ["code": code])
        guard answer["ok"] as? Bool == true, let found = answer["result"] as? [String: Any],
            let countries = found["countries"] as? [[String: Any]], let country = countries.first?["name"] as? String
        else { throw BenchError("countries \(code) failed: \(answer)") }
        return "\(address); \(country)"
    }

    /// Tries `count` direct gpsd clients; gpsd closes the ones over its limit at once.
    @discardableResult
    private func connectDirectClients(_ count: Int, port: UInt16, _ reader: Reader) -> Int {
        for _ in 0..<count { _ = reader.addGPSDClient(port: port, kind: .gpsd) }
        return count
    }

    /// `--per-epoch`: p50 / max of each measured epoch, to see where outliers come from.
    private func printEpochs(_ reader: Reader, _ kind: Reader.Kind, _ epochs: Set<Int>) {
        guard options.perEpoch else { return }
        for epoch in epochs.sorted() {
            guard let stats = Stats(reader.latencies(kind, epochs: [epoch])) else { continue }
            let lag = Report.ms(reader.readerLag(epochs: [epoch])[0])
            let sameFix = Stats(reader.latenciesFromSameFix(kind, epochs: [epoch])).map { Report.ms($0.p50) } ?? "—"
            log(
                "  \(kind) epoch \(epoch): p50 \(Report.ms(stats.p50)) max \(Report.ms(stats.max)) "
                    + "from the same fix p50 \(sameFix) reader lag \(lag)")
        }
    }

    /// Waits until the reference has a TPV: gpsfake has added its device over
    /// gpsd's control socket, which it cannot do once clients fill every slot.
    private func waitForFeed(_ reader: Reader) throws {
        guard reader.run(timeout: 15, until: { !reader.referenceArrival.isEmpty }) else {
            throw BenchError("gpsfake fed nothing within 15 s")
        }
    }

    /// Waits for `epochs` reference epochs after setup, then a grace period
    /// for late subscribers; returns the measured epochs.
    private func measure(_ reader: Reader, epochs: Int) -> Set<Int> {
        let start = Posix.monotonicNanos() + 200_000_000
        let enough = reader.run(timeout: Double(epochs) * 4 + 20) { reader.epochs(after: start).count >= epochs }
        if !enough { log("only \(reader.epochs(after: start).count) of \(epochs) epochs arrived") }
        let measured = Set(reader.epochs(after: start).prefix(epochs))
        reader.run(timeout: options.grace) { false }
        return measured
    }

    /// akloc subscribers and direct gpsd clients side by side on one gpsd.
    func akloc(_ subscribers: Int, into row: inout LatencyRow) throws {
        let fake = try startGPSFake()
        defer { fake.stop() }
        let directory = try temporaryDirectory("daemon")
        defer { try? FileManager.default.removeItem(at: directory) }
        let reader = Reader()
        defer { reader.closeAll() }
        // The reference connects first, so gpsd writes to it before anyone else.
        guard reader.addGPSDClient(port: fake.port, kind: .reference) else {
            throw BenchError("gpsd refused the reference client")
        }
        try waitForFeed(reader)
        let (daemon, socketPath) = try startDaemon(gpsdPort: fake.port, in: directory)
        defer { daemon.kill() }
        try waitForSocket(socketPath, process: daemon)
        let setupStart = Posix.monotonicNanos()
        for _ in 0..<subscribers {
            guard let fd = Posix.connectUnix(socketPath) else { continue }
            reader.add(fd: fd, kind: .akloc, greeting: subscribeLine)
        }
        row.aklocConnected = reader.count(.akloc)
        row.gpsdAttempted = connectDirectClients(subscribers, port: fake.port, reader)
        if !reader.run(timeout: 120, until: { reader.subscribersReady }) {
            row.notes.append("not every akloc subscriber was answered within 120 s")
        }
        row.setupSeconds = Double(Posix.monotonicNanos() - setupStart) / 1e9
        row.gpsdAccepted = reader.count(.gpsd)
        if !reader.errorLines.isEmpty { row.notes.append("aklocd errors: \(reader.errorLines.joined(separator: " "))") }
        var epochs = Set<Int>()
        let cpu = cpuPerEpoch([daemon.pid, fake.gpsdPID], reader) { epochs = measure(reader, epochs: options.epochs) }
        row.aklocCPUMillis = cpu[0]
        row.gpsdCPUMillis = cpu[1]
        row.epochs = epochs.count
        row.aklocReaderLag = Stats(reader.readerLag(epochs: epochs))
        printEpochs(reader, .akloc, epochs)
        let times = epochs.sorted().map { reader.referenceArrival[$0] }
        if let first = times.first, let last = times.last, times.count > 1 {
            row.epochIntervalMillis = Double(last - first) / 1e6 / Double(times.count - 1)
        }
        row.akloc = Stats(reader.latencies(.akloc, epochs: epochs))
        row.aklocSameFix = Stats(reader.latenciesFromSameFix(.akloc, epochs: epochs))
        row.splitTime = Stats(epochs.map { reader.referenceSameFix[$0] - reader.referenceKernel[$0] })
        row.aklocReceived = reader.latencies(.akloc, epochs: epochs).count
        row.aklocExpected = row.aklocConnected * epochs.count
        row.gpsd = Stats(reader.latencies(.gpsd, epochs: epochs))
        row.gpsdReceived = reader.latencies(.gpsd, epochs: epochs).count
        row.gpsdExpected = row.gpsdAccepted * epochs.count
        row.aklocPeakBeforeLookupsKiB = Posix.procStatus("/proc/\(daemon.pid)/status")["VmHWM"] ?? 0
        do {
            row.geoLookups = try geoLookups(socketPath)
        } catch {
            row.geoLookups = "failed: \(error)"
            row.notes.append("geo lookups \(row.geoLookups)")
        }
        let status = Posix.procStatus("/proc/\(daemon.pid)/status")
        row.aklocPeakKiB = status["VmHWM"] ?? 0
        row.aklocResidentKiB = status["VmRSS"] ?? 0
        let rollup = Posix.procStatus("/proc/\(daemon.pid)/smaps_rollup")
        row.aklocPssKiB = rollup["Pss"] ?? 0
        row.aklocPrivateKiB = (rollup["Private_Clean"] ?? 0) + (rollup["Private_Dirty"] ?? 0)
        row.aklocThreads = Posix.threadCount(daemon.pid)
        if let gpsd = fake.gpsdPID { row.gpsdPeakKiB = Posix.procStatus("/proc/\(gpsd)/status")["VmHWM"] ?? 0 }
        if !daemon.isRunning { row.notes.append("aklocd exited: \(daemon.stderr())") }
        // Client 1 is the readiness probe, which hangs up at once.
        let said = daemon.stderr().split(separator: "\n").filter { !$0.contains("dropping client 1 ") }
        if !said.isEmpty {
            row.notes.append("aklocd said (\(said.count) lines): \(said.prefix(3).joined(separator: " | "))")
        }
    }

    /// The floor: the same reader, the same reference, the bare fan-out program.
    func floor(_ subscribers: Int, into row: inout LatencyRow) throws {
        let fake = try startGPSFake()
        defer { fake.stop() }
        let directory = try temporaryDirectory("floor")
        defer { try? FileManager.default.removeItem(at: directory) }
        let reader = Reader()
        defer { reader.closeAll() }
        guard reader.addGPSDClient(port: fake.port, kind: .reference) else {
            throw BenchError("gpsd refused the reference client")
        }
        try waitForFeed(reader)
        let socketPath = directory.appendingPathComponent("floor.sock").path
        let floor = try TestProcess(options.selfPath, ["floor", String(fake.port), socketPath])
        defer { floor.kill() }
        try waitForSocket(socketPath, process: floor)
        for _ in 0..<subscribers {
            guard let fd = Posix.connectUnix(socketPath) else { continue }
            reader.add(fd: fd, kind: .floor)
        }
        // The same direct gpsd clients as beside aklocd, so the reader and
        // gpsd carry the same load in both phases (their latency is not reported).
        connectDirectClients(subscribers, port: fake.port, reader)
        let connected = reader.count(.floor)
        if !reader.run(timeout: 60, until: { reader.subscribersReady }) {
            row.notes.append("not every floor subscriber was greeted within 60 s")
        }
        var epochs = Set<Int>()
        row.floorCPUMillis = cpuPerEpoch([floor.pid], reader) { epochs = measure(reader, epochs: options.epochs) }[0]
        row.floorEpochs = epochs.count
        row.floorReaderLag = Stats(reader.readerLag(epochs: epochs))
        printEpochs(reader, .floor, epochs)
        row.floor = Stats(reader.latencies(.floor, epochs: epochs))
        row.floorReceived = reader.latencies(.floor, epochs: epochs).count
        row.floorExpected = connected * epochs.count
        row.floorPeakKiB = Posix.procStatus("/proc/\(floor.pid)/status")["VmHWM"] ?? 0
    }

    /// Context switches of every aklocd thread over `window` seconds: one
    /// daemon idle (connected to gpsd, no subscribers), one paused with
    /// subscribers, side by side on the same gpsd. Both without the track
    /// recorder: it is an engine subscriber of its own (on by default), so
    /// with it aklocd watches gpsd and wakes for every line, which is not idle.
    func wakeups(pausedSubscribers: Int) throws -> WakeupResult {
        var result = WakeupResult(window: options.wakeWindow)
        let fake = try startGPSFake()
        defer { fake.stop() }
        let idleDirectory = try temporaryDirectory("idle")
        let pausedDirectory = try temporaryDirectory("paused")
        defer {
            try? FileManager.default.removeItem(at: idleDirectory)
            try? FileManager.default.removeItem(at: pausedDirectory)
        }
        let noRecorder = "[track]\nenable = no\n"
        let (idle, idleSocket) = try startDaemon(gpsdPort: fake.port, in: idleDirectory, extraConfig: noRecorder)
        defer { idle.kill() }
        let (paused, pausedSocket) = try startDaemon(
            gpsdPort: fake.port, in: pausedDirectory, extraConfig: noRecorder)
        defer { paused.kill() }
        try waitForSocket(idleSocket, process: idle)
        try waitForSocket(pausedSocket, process: paused)
        let reader = Reader()
        defer { reader.closeAll() }
        for _ in 0..<pausedSubscribers {
            guard let fd = Posix.connectUnix(pausedSocket) else { continue }
            reader.add(fd: fd, kind: .akloc, greeting: subscribeLine)
        }
        reader.run(timeout: 30) { reader.subscribersReady }
        // Let a few fixes flow, then pause (as root, over a control connection).
        reader.run(timeout: 2.5) { false }
        guard let control = Posix.connectUnix(pausedSocket) else { throw BenchError("cannot connect to pause") }
        Posix.writeAll(control, "{\"id\":2,\"op\":\"pause\"}\n")
        reader.add(fd: control, kind: .akloc)
        reader.run(timeout: 10) { reader.subscribersReady }
        result.pausedSubscribers = reader.count(.akloc) - 1
        // Settle, then count.
        reader.run(timeout: 1) { false }
        // Sampled every 100 ms so threads that come and go are seen.
        var idleCounter = SwitchCounter(pid: idle.pid)
        var pausedCounter = SwitchCounter(pid: paused.pid)
        let end = Posix.monotonicNanos() + Int64(options.wakeWindow * 1e9)
        while Posix.monotonicNanos() < end {
            Posix.sleep(seconds: 0.1)
            idleCounter.sample()
            pausedCounter.sample()
        }
        result.idleSwitches = idleCounter.total
        result.pausedSwitches = pausedCounter.total
        result.idleThreadChurn = idleCounter.threadsStarted + idleCounter.threadsEnded
        result.pausedThreadChurn = pausedCounter.threadsStarted + pausedCounter.threadsEnded
        result.idleThreads = Posix.threadCount(idle.pid)
        result.pausedThreads = Posix.threadCount(paused.pid)
        return result
    }

    /// exec to READY=1 on a test-owned NOTIFY_SOCKET, `starts` times.
    func ready(starts: Int) throws -> ReadyResult {
        let directory = try temporaryDirectory("ready")
        defer { try? FileManager.default.removeItem(at: directory) }
        let notifyPath = directory.appendingPathComponent("notify.sock").path
        let notify = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(notify) }
        do {
            try UnixSocketAddress(path: notifyPath).bind(notify)
        } catch {
            throw BenchError("cannot bind \(notifyPath): \(error)")
        }
        // A port nothing listens on: READY must not wait for gpsd.
        let port = FreePort.loopbackTCP()
        var samples: [Double] = []
        for start in 0..<starts {
            let run = directory.appendingPathComponent("run\(start)")
            try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
            let before = Posix.monotonicNanos()
            let (daemon, _) = try startDaemon(gpsdPort: port, in: run, environment: ["NOTIFY_SOCKET": notifyPath])
            defer { daemon.kill() }
            var buffer = [UInt8](repeating: 0, count: 4096)
            var readyAt: Int64?
            while readyAt == nil, Posix.monotonicNanos() - before < 10_000_000_000 {
                var poller = pollfd(fd: notify, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 100) > 0 else { continue }
                let count = recv(notify, &buffer, buffer.count, 0)
                guard count > 0 else { continue }
                if String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").contains("READY=1") {
                    readyAt = Posix.monotonicNanos()
                }
            }
            guard let readyAt else { throw BenchError("aklocd never sent READY=1: \(daemon.stderr())") }
            samples.append(Double(readyAt - before) / 1e6)
        }
        return ReadyResult(samplesMillis: samples)
    }
}
