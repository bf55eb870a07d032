import AklocTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `akloc-bench --fleet N` (`make bench-fleet`, DESIGN §7, issues 19 and 30):
/// N aklocd instances, one gpsfake replay per `perReplay` of them (gpsd keeps
/// at most 64 clients), each its own OwnTracks device publishing every epoch
/// on loopback into a three-node nats-server cluster or one mosquitto
/// (`FleetBroker`), and one `mosquitto_sub` with a persistent QoS 1 session
/// reading the whole time. Every device's fixes are counted against the
/// epochs its gpsd sent to a `gpspipe` beside it, and the memory of the
/// fleet and of each broker node is sampled from /proc while it runs.
final class Fleet {
    struct Settings {
        var instances = 1_000
        var broker = FleetBroker.Kind.nats
        /// Replay only the capture's first `lines` lines (nil: all of it),
        /// to shorten a large fleet's run; the expected epochs are still
        /// those each gpsd really sent.
        var lines: Int?
        var perReplay = 50
        /// How long gpsfake waits before it feeds the capture: the group's
        /// daemons must be watching by then, or they miss its first epochs.
        var window = 30.0
        /// After the last replay ends, how long the fixes may take to arrive.
        var drain = 120.0
        /// Memory is sampled this often while the replays run.
        var sampleEvery = 5.0
    }

    /// One gpsd replay, its reference client and its daemons.
    final class Group {
        let fake: GPSFake
        let reference: GPSPipe
        var daemons: [(device: String, process: DaemonProcess)] = []
        var startSeconds = 0.0
        /// Looked up once: finding it scans /proc.
        var gpsdPID: pid_t?

        init(fake: GPSFake, reference: GPSPipe) {
            self.fake = fake
            self.reference = reference
        }

        func stop() {
            for daemon in daemons { daemon.process.stop() }
            reference.stop()
            fake.stop()
        }
    }

    struct Result {
        var settings: Settings
        var started = 0
        var replays = 0
        var epochsPerReplay: [Int] = []
        var expected = 0
        var arrived = 0
        var duplicates = 0
        var unexpected = 0
        var sameEpoch = 0
        /// TPVs with a position but no time in each reference: no epoch to match.
        var untimedPerReplay: [Int] = []
        var daemonsPerReplay: [Int] = []
        /// The same count from the capture's .chk (gpsd's expected output), when it is the capture's.
        var checkEpochs: Int?
        /// A few of the repeats and unexpected locations, for the report.
        var examples: [String] = []
        var devicesComplete = 0
        /// Devices with something missing, worst first: (device, missing, expected).
        var incomplete: [(String, Int, Int)] = []
        var startupSeconds: [Double] = []
        var peakPssKiB = 0
        var peakRssKiB = 0
        var samples = 0
        var peakHWMKiB: [Int] = []
        var privateKiB: [Int] = []
        var broker = ""
        var brokerNodes: [BrokerUse] = []
        var subscriberPeakKiB = 0
        var gpsdPeakKiB: [Int] = []
        var cpuMillisPerEpoch = 0.0
        var memAvailableStartKiB = 0
        var memAvailableLowestKiB = Int.max
        var leftoverSegments = 0
        var leftoverProcesses = 0
        var leftoverDirectories = 0
        var seconds = 0.0
        var loadStart = ""
        var loadEnd = ""
        var drainSeconds = 0.0
        var notes: [String] = []
    }

    /// One broker process's memory (peaks of the samples, VmHWM at the
    /// end) and CPU time over the whole run.
    struct BrokerUse {
        var name: String
        var peakPssKiB = 0
        var peakRssKiB = 0
        var hwmKiB = 0
        var cpuSeconds = 0.0
    }

    let options: Options
    let settings: Settings

    init(options: Options, settings: Settings) {
        self.options = options
        self.settings = settings
    }

    private func log(_ text: String) { progress("fleet: \(text)") }

    private static func now() -> Double { Double(Posix.monotonicNanos()) / 1e9 }

    func run() throws -> Result {
        var result = Result(settings: settings)
        let began = Fleet.now()
        result.loadStart = Machine.loadAverage()
        result.memAvailableStartKiB = Posix.procStatus("/proc/meminfo")["MemAvailable"] ?? 0
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-bench-fleet-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)

        // Everything started is stopped by pid, on success and on error, and
        // what is left counted (after the stop, so the count is the truth).
        var groups: [Group] = []
        var pids: [pid_t] = []
        var ports: [UInt16] = []
        var directories = [scratch]
        var broker: FleetBroker?
        var subscriber: MQTTSubscriber?
        var stopped = false
        func stopAll() {
            guard !stopped else { return }
            stopped = true
            for group in groups {
                pids += [group.fake.process.pid, group.reference.process.pid] + [group.gpsdPID].compactMap { $0 }
                directories.append(contentsOf: group.daemons.map(\.process.directory))
                group.stop()
            }
            if let subscriber {
                pids.append(subscriber.process.pid)
                subscriber.stop()
            }
            if let broker {
                pids += broker.nodes.map(\.pid)
                directories.append(broker.directory)
                broker.stop()
            }
            try? FileManager.default.removeItem(at: scratch)
            result.leftoverProcesses = pids.filter { !TestProcess.isDead($0) }.count
            let ours = Set(ports.map(SharedMemory.gpsdKey(port:)))
            result.leftoverSegments = SharedMemory.segments().filter { ours.contains($0.key) }.count
            result.leftoverDirectories = directories.filter { FileManager.default.fileExists(atPath: $0.path) }.count
        }
        defer { stopAll() }
        let capture = try delayedCapture(in: scratch)

        log("starting the broker: \(settings.broker.rawValue)")
        let started = try FleetBroker(settings.broker)
        broker = started
        result.broker = started.description
        let consumer = try MQTTSubscriber(port: started.consumerPort)
        subscriber = consumer
        try consumer.waitUntilSubscribed(port: started.consumerPort, timeout: 60)
        log("broker ready: \(started.nodes.map(\.name).joined(separator: ", ")); load \(Machine.loadAverage())")

        var sampler = MemorySampler(brokers: started.nodes)
        let replays = (settings.instances + settings.perReplay - 1) / settings.perReplay
        for index in 0..<replays {
            let fake = try GPSFake.start(log: capture, cycle: options.cycle)
            ports.append(fake.port)
            // Connected before the daemons, so it is sure to see every epoch.
            let group = Group(fake: fake, reference: try GPSPipe(port: fake.port))
            groups.append(group)
            let start = Fleet.now()
            let first = index * settings.perReplay
            for number in first..<min(settings.instances, first + settings.perReplay) {
                let device = String(format: "d%04d", number + 1)
                let daemon = try DaemonProcess(
                    gpsdPort: fake.port, config: config(device, started.hostLine(number)), waitForSocket: false)
                group.daemons.append((device, daemon))
                pids.append(daemon.process.pid)
            }
            for (_, daemon) in group.daemons { try daemon.waitUntilServing(timeout: settings.window) }
            group.startSeconds = Fleet.now() - start
            group.gpsdPID = fake.gpsdPID
            result.startupSeconds.append(group.startSeconds)
            if group.startSeconds > settings.window {
                result.notes.append(
                    "replay \(index + 1): its daemons took \(String(format: "%.1f", group.startSeconds)) s to serve, "
                        + "longer than the \(Int(settings.window)) s start-up window")
            }
            result.started += group.daemons.count
            log(
                "replay \(index + 1)/\(replays) on port \(fake.port): \(result.started) daemons serving "
                    + "(\(String(format: "%.1f", group.startSeconds)) s), load \(Machine.loadAverage())")
            sampler.sample(groups)
        }
        result.replays = groups.count

        // The replays run; sample the fleet until the last one has ended.
        let replaySeconds = Double(Fleet.lineCount(capture)) * options.cycle
        let deadline = Fleet.now() + settings.window + replaySeconds * 1.5 + 60
        var nextSample = Fleet.now() + settings.sampleEvery
        while groups.contains(where: { $0.fake.process.isRunning }) {
            guard Fleet.now() < deadline else {
                result.notes.append("a replay was still running at the deadline; it was stopped")
                break
            }
            if Fleet.now() >= nextSample {
                sampler.sample(groups)
                nextSample += settings.sampleEvery
                log("sampled: PSS sum \(Report.mib(sampler.peakPss)) MiB, load \(Machine.loadAverage())")
            }
            Posix.sleep(seconds: 0.2)
        }
        sampler.sample(groups)
        for group in groups { group.reference.waitForExit(timeout: 10) }

        // Expected: the epochs with a position each replay's gpsd sent its reference.
        var expected: [String: Set<Int>] = [:]
        for group in groups {
            let tpvs = group.reference.tpvs()
            let epochs = Fleet.epochs(tpvs)
            result.epochsPerReplay.append(epochs.count)
            result.untimedPerReplay.append(Fleet.untimed(tpvs))
            result.daemonsPerReplay.append(group.daemons.count)
            for (device, _) in group.daemons { expected[device] = epochs }
        }
        result.expected = expected.values.reduce(0) { $0 + $1.count }
        // The .chk is the whole capture's: no measure of a shortened replay.
        result.checkEpochs = settings.lines == nil ? Fleet.checkEpochs(options.check, log: options.log) : nil

        // Arrived: what the one subscriber got, waiting (bounded) for the queues to drain.
        let drainStart = Fleet.now()
        var received: [String: [(tst: Int, payload: String)]] = [:]
        while true {
            received = Fleet.locations(consumer.messages())
            let complete = expected.allSatisfy { device, epochs in
                epochs.isSubset(of: Set((received[device] ?? []).map(\.tst)))
            }
            if complete || Fleet.now() - drainStart > settings.drain || !consumer.process.isRunning { break }
            Posix.sleep(seconds: 2)
        }
        result.drainSeconds = Fleet.now() - drainStart
        if !consumer.process.isRunning { result.notes.append("mosquitto_sub exited: \(consumer.process.stderr())") }

        for (device, epochs) in expected.sorted(by: { $0.key < $1.key }) {
            let got = received[device] ?? []
            let unique = Set(got.map(\.tst))
            result.arrived += unique.intersection(epochs).count
            // The same tst twice: the same payload again is a QoS 1 redelivery,
            // a different one a second publish for the same epoch.
            var payloads: [Int: String] = [:]
            for (tst, payload) in got {
                guard epochs.contains(tst) else {
                    result.unexpected += 1
                    if result.examples.count < 6 {
                        result.examples.append("\(device), a tst that is no reference epoch: \(payload)")
                    }
                    continue
                }
                if let first = payloads[tst] {
                    if first == payload { result.duplicates += 1 } else { result.sameEpoch += 1 }
                    if result.examples.count < 6 {
                        result.examples.append("\(device) again: \(payload) (first: \(first))")
                    }
                } else {
                    payloads[tst] = payload
                }
            }
            let missing = epochs.subtracting(unique).count
            if missing == 0 {
                result.devicesComplete += 1
            } else {
                result.incomplete.append((device, missing, epochs.count))
            }
        }
        result.incomplete.sort { $0.1 > $1.1 }

        // The last view of every process before the clean-up.
        var cpuNanos: Int64 = 0
        for group in groups {
            for (device, daemon) in group.daemons {
                let pid = daemon.process.pid
                let status = Posix.procStatus("/proc/\(pid)/status")
                result.peakHWMKiB.append(status["VmHWM"] ?? 0)
                let rollup = Posix.procStatus("/proc/\(pid)/smaps_rollup")
                result.privateKiB.append((rollup["Private_Clean"] ?? 0) + (rollup["Private_Dirty"] ?? 0))
                cpuNanos += Posix.cpuNanos(pid)
                if !daemon.process.isRunning {
                    result.notes.append("\(device) exited early: \(daemon.process.stderr().suffix(300))")
                }
            }
        }
        let epochs = result.epochsPerReplay.max() ?? 0
        if result.started > 0, epochs > 0 {
            result.cpuMillisPerEpoch = Double(cpuNanos) / 1e6 / Double(result.started) / Double(epochs)
        }
        result.gpsdPeakKiB = sampler.gpsdPeak
        sampler.sample(groups)
        result.brokerNodes = sampler.brokerPeaks
        for (index, node) in started.nodes.enumerated() where index < result.brokerNodes.count {
            result.brokerNodes[index].hwmKiB = Posix.procStatus("/proc/\(node.pid)/status")["VmHWM"] ?? 0
            result.brokerNodes[index].cpuSeconds = Double(Posix.cpuNanos(node.pid)) / 1e9
        }
        result.subscriberPeakKiB = Posix.procStatus("/proc/\(consumer.process.pid)/status")["VmHWM"] ?? 0
        result.peakPssKiB = sampler.peakPss
        result.peakRssKiB = sampler.peakRss
        result.samples = sampler.count
        result.memAvailableLowestKiB = sampler.lowestAvailable
        result.loadEnd = Machine.loadAverage()
        stopAll()
        result.seconds = Fleet.now() - began
        return result
    }

    private func config(_ device: String, _ hostLine: String) -> String {
        """
        [mqtt]
        enable = yes
        \(hostLine)
        user = fleet
        device = \(device)
        min-interval = 0
        max-interval = 0
        """
    }

    /// The capture with one line in front that makes gpsfake wait
    /// `settings.window` seconds before it feeds the rest (its `%Delay:`
    /// feature; only a comment with `Date:` in it is kept as a sentence, and
    /// gpsd ignores the comment), so each group's 50 daemons are all watching
    /// before the first epoch instead of racing gpsfake's 1.4 s.
    private func delayedCapture(in directory: URL) throws -> String {
        var text = try String(contentsOfFile: options.log, encoding: .utf8)
        if let lines = settings.lines {
            // Bytes, not Characters: the captures end their lines with CRLF, one Character.
            let kept = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).prefix(lines)
            text = kept.map { String(decoding: $0, as: UTF8.self) + "\n" }.joined()
        }
        let date =
            text.split(whereSeparator: \.isNewline).first { $0.hasPrefix("# Date:") }
            .map { String($0.dropFirst("# Date:".count)).trimmingCharacters(in: .whitespaces) } ?? "1970-01-01"
        let path = directory.appendingPathComponent(URL(fileURLWithPath: options.log).lastPathComponent).path
        try ("#%Delay: \(Int(settings.window)) Date: \(date)\n" + text).write(
            toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func lineCount(_ path: String) -> Int {
        // Bytes, not Characters: the captures end their lines with CRLF, one Character.
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").utf8.split(separator: UInt8(ascii: "\n")).count
    }

    /// Whole seconds (OwnTracks `tst`) of the TPVs with a position.
    static func epochs(_ tpvs: [[String: Any]]) -> Set<Int> {
        Set(
            tpvs.compactMap { tpv in
                guard (tpv["mode"] as? Int ?? 0) >= 2, tpv["lat"] != nil, tpv["lon"] != nil,
                    let time = tpv["time"] as? String
                else { return nil }
                return epochSeconds(time)
            })
    }

    /// Epochs with a position in `check` if it is `log`'s .chk, else nil.
    static func checkEpochs(_ check: String, log: String) -> Int? {
        guard URL(fileURLWithPath: check).lastPathComponent == URL(fileURLWithPath: log).lastPathComponent + ".chk",
            let text = try? String(contentsOfFile: check, encoding: .utf8)
        else { return nil }
        let tpvs = text.split(whereSeparator: \.isNewline).compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }.filter { $0["class"] as? String == "TPV" }
        return epochs(tpvs).count
    }

    /// TPVs with a position but no time (gpsd before it knows the date).
    static func untimed(_ tpvs: [[String: Any]]) -> Int {
        tpvs.filter { ($0["mode"] as? Int ?? 0) >= 2 && $0["lat"] != nil && $0["time"] == nil }.count
    }

    /// "2018-08-20T10:11:12.000Z" to seconds since 1970 (UTC), nil if malformed.
    static func epochSeconds(_ iso: String) -> Int? {
        let digits = iso.split(whereSeparator: { !$0.isNumber }).map { Int($0) }
        guard digits.count >= 6, let year = digits[0], let month = digits[1], let day = digits[2],
            let hour = digits[3], let minute = digits[4], let second = digits[5]
        else { return nil }
        // Days from civil (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + hour * 3_600 + minute * 60 + second
    }

    /// `tst` of every location on a device topic (`owntracks/fleet/<device>`), by device, in arrival order.
    static func locations(_ messages: [MQTTSubscriber.Message]) -> [String: [(tst: Int, payload: String)]] {
        var byDevice: [String: [(tst: Int, payload: String)]] = [:]
        for message in messages where message.topic.hasPrefix("owntracks/fleet/") {
            let parts = message.topic.split(separator: "/")
            guard parts.count == 3, let json = message.json, json["_type"] as? String == "location",
                let tst = json["tst"] as? Int
            else { continue }
            byDevice[String(parts[2]), default: []].append((tst, message.payload))
        }
        return byDevice
    }
}

/// Sums the fleet's resident memory from /proc/PID/smaps_rollup: RSS counts
/// every shared library page once per process, PSS splits each shared page
/// among the processes mapping it, so the PSS sum is what the fleet costs.
struct MemorySampler {
    private(set) var peakPss = 0
    private(set) var peakRss = 0
    private(set) var count = 0
    private(set) var lowestAvailable = Int.max
    private var gpsd: [pid_t: Int] = [:]
    private let brokers: [FleetBroker.Node]
    /// Each broker node's peak PSS and RSS, in `brokers`' order.
    private(set) var brokerPeaks: [Fleet.BrokerUse]

    init(brokers: [FleetBroker.Node]) {
        self.brokers = brokers
        brokerPeaks = brokers.map { Fleet.BrokerUse(name: $0.name) }
    }

    var gpsdPeak: [Int] { gpsd.keys.sorted().map { gpsd[$0] ?? 0 } }

    mutating func sample(_ groups: [Fleet.Group]) {
        for (index, node) in brokers.enumerated() {
            let rollup = Posix.procStatus("/proc/\(node.pid)/smaps_rollup")
            brokerPeaks[index].peakPssKiB = max(brokerPeaks[index].peakPssKiB, rollup["Pss"] ?? 0)
            brokerPeaks[index].peakRssKiB = max(brokerPeaks[index].peakRssKiB, rollup["Rss"] ?? 0)
        }
        var pss = 0
        var rss = 0
        for group in groups {
            for (_, daemon) in group.daemons {
                let rollup = Posix.procStatus("/proc/\(daemon.process.pid)/smaps_rollup")
                pss += rollup["Pss"] ?? 0
                rss += rollup["Rss"] ?? 0
            }
            if let pid = group.gpsdPID {
                gpsd[pid] = max(gpsd[pid] ?? 0, Posix.procStatus("/proc/\(pid)/status")["VmHWM"] ?? 0)
            }
        }
        peakPss = max(peakPss, pss)
        peakRss = max(peakRss, rss)
        lowestAvailable = min(lowestAvailable, Posix.procStatus("/proc/meminfo")["MemAvailable"] ?? Int.max)
        count += 1
    }
}
