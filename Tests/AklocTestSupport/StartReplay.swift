import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One fix epoch as the receiver tests compare them: gpspipe's merged
/// epoch, or a location aklocd delivered.
public struct FixEpoch: Equatable, CustomStringConvertible, Sendable {
    public var time: String
    public var latitude: Double
    public var longitude: Double
    public var mode: Int
    public var speed: Double?
    public var course: Double?

    public init(time: String, latitude: Double, longitude: Double, mode: Int, speed: Double?, course: Double?) {
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.mode = mode
        self.speed = speed
        self.course = course
    }

    /// A location object of aklocd's protocol; nil without the receiver's time.
    public init?(wire location: [String: Any]) {
        guard let time = location["timestamp"] as? String, let latitude = location["latitude"] as? Double,
            let longitude = location["longitude"] as? Double
        else { return nil }
        self.init(
            time: time, latitude: latitude, longitude: longitude, mode: location["mode"] as? String == "3d" ? 3 : 2,
            speed: location["speed"] as? Double, course: location["course"] as? Double)
    }

    /// The same epoch: time, mode and position, and speed and course each
    /// present exactly when the other has them (equal to a millimetre a second, a thousandth of a degree).
    public func matches(_ other: FixEpoch) -> Bool {
        func same(_ a: Double?, _ b: Double?) -> Bool {
            switch (a, b) {
            case (nil, nil): return true
            case (let a?, let b?): return abs(a - b) <= 1e-3
            default: return false
            }
        }
        return time == other.time && mode == other.mode && abs(latitude - other.latitude) <= 1e-7
            && abs(longitude - other.longitude) <= 1e-7 && same(speed, other.speed) && same(course, other.course)
    }

    public var description: String {
        "\(time) \(latitude),\(longitude) m\(mode) v\(speed.map { "\($0)" } ?? "-") c\(course.map { "\($0)" } ?? "-")"
    }

    /// gpspipe's epochs: one per run of fix TPVs with the same time (a
    /// receiver's clock can go back, so a time may recur as a new epoch),
    /// each TPV's fields overriding the earlier ones' (what a `gpspipe -w`
    /// reader merges). TPVs without a time are no epoch of the receiver's.
    public static func merged(_ tpvs: [[String: Any]]) -> [FixEpoch] {
        grouped(tpvs).compactMap(merge)
    }

    /// gpspipe's fix TPVs with a time, one array per epoch (a run of the same time).
    public static func grouped(_ tpvs: [[String: Any]]) -> [[[String: Any]]] {
        var groups: [[[String: Any]]] = []
        var previous: String?
        for tpv in tpvs {
            guard let mode = tpv["mode"] as? Int, mode >= 2, let time = tpv["time"] as? String,
                tpv["lat"] is Double, tpv["lon"] is Double
            else { continue }
            if time == previous { groups[groups.count - 1].append(tpv) } else { groups.append([tpv]) }
            previous = time
        }
        return groups
    }

    /// One epoch's TPVs merged, later ones' fields winning (nil for none).
    public static func merge(_ tpvs: [[String: Any]]) -> FixEpoch? {
        var epoch: FixEpoch?
        for tpv in tpvs {
            guard let mode = tpv["mode"] as? Int, let time = tpv["time"] as? String,
                let latitude = tpv["lat"] as? Double, let longitude = tpv["lon"] as? Double
            else { continue }
            let speed = tpv["speed"] as? Double
            let course = tpv["track"] as? Double
            if var last = epoch {
                last.latitude = latitude
                last.longitude = longitude
                last.mode = mode
                last.speed = speed ?? last.speed
                last.course = course ?? last.course
                epoch = last
            } else {
                epoch = FixEpoch(
                    time: time, latitude: latitude, longitude: longitude, mode: mode, speed: speed, course: course)
            }
        }
        return epoch
    }

    /// Compares aklocd's epochs with gpspipe's, in order: what is wrong (as
    /// many epochs; some, unless the capture never gets a fix; the first
    /// differing epoch, capture and epoch named), and the epochs that went out
    /// early because the cycle grew (docs/semantics.md, "Epochs": gpsd
    /// learned a new cycle ender, or the receiver sent more): an epoch with
    /// more TPVs than either of the two before it, delivered as gpsd's merge
    /// of its first TPVs (the shape before it). Anything else is a difference.
    public static func compare(_ ours: [FixEpoch], _ tpvs: [[String: Any]], name: String) -> (
        problems: [String], grown: [String]
    ) {
        let groups = grouped(tpvs)
        var problems: [String] = []
        if ours.count != groups.count {
            problems.append("\(name): aklocd \(ours.count) epochs, gpspipe \(groups.count)")
        }
        // A replay that fed nothing must not pass as agreement.
        if groups.isEmpty, !name.contains("nofix") { problems.append("\(name): gpspipe saw no fix") }
        var grown: [String] = []
        for (index, (epoch, group)) in zip(ours, groups).enumerated() {
            guard let expected = merge(group) else { continue }
            if epoch.matches(expected) { continue }
            // The shape aklocd knew had at most the TPVs of the larger of the
            // two epochs before (it shrinks only when two agree).
            let before = index > 1 ? max(groups[index - 1].count, groups[index - 2].count) : Int.max
            if group.count > before,
                (1..<group.count).contains(where: { merge(Array(group.prefix($0)))?.matches(epoch) == true })
            {
                grown.append("\(name) epoch \(index): \(group.count) TPVs after \(before)")
                continue
            }
            problems.append("\(name) epoch \(index): aklocd \(epoch) vs gpspipe \(expected) (\(group.count) TPVs)")
            break
        }
        return (problems, grown)
    }
}

/// aklocd on a gpsd replay seen from its very first sentence (issue 31):
/// gpspipe and aklocd's subscribers are all attached, and gpsd has
/// confirmed aklocd's watch, before the replay starts (`GPSFake`'s gate).
/// One subscriber observes `rawLocation` (every epoch); one per policy
/// starts updates with it. Every message is timed as it arrives.
public final class StartReplay: @unchecked Sendable {
    // @unchecked: the reader threads write `arrivals` under `lock` only.
    public struct Arrival {
        /// Seconds on the test's monotonic clock.
        public var at: Double
        public var message: [String: Any]
    }

    /// What the `rawLocation` observer got, in order.
    public private(set) var raw: [Arrival] = []
    /// What each policy's subscriber got, in order.
    public private(set) var streams: [[Arrival]] = []
    /// gpspipe's TPVs from the same gpsd.
    public private(set) var tpvs: [[String: Any]] = []
    /// aklocd's log.
    public private(set) var daemonLog = ""

    private let lock = NSLock()

    /// The gpsd side: a replay on `port` whose feeding waits for `release`;
    /// `pipeReady` once gpspipe's watch is confirmed; `finished` once the
    /// replay is over; `stop` ends it (gpsd goes away); `pipeOutput` is gpspipe's.
    public struct Source {
        public var port: UInt16
        public var pipeReady: () -> Bool
        public var release: () -> Void
        public var finished: () -> Bool
        public var stop: () -> Void
        public var pipeOutput: () -> [[String: Any]]

        public init(
            port: UInt16, pipeReady: @escaping () -> Bool, release: @escaping () -> Void,
            finished: @escaping () -> Bool, stop: @escaping () -> Void,
            pipeOutput: @escaping () -> [[String: Any]]
        ) {
            self.port = port
            self.pipeReady = pipeReady
            self.release = release
            self.finished = finished
            self.stop = stop
            self.pipeOutput = pipeOutput
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// gpsfake and gpspipe on `log`: the host's, or with `launcher` those
    /// of another root (`TrixieRoot`), `log` being the path there.
    public static func host(log: String, cycle: Double?, launcher: [String] = []) throws -> (Source, GPSFake, GPSPipe) {
        let fake = try GPSFake.start(log: log, cycle: cycle, gated: true, launcher: launcher)
        let pipe: GPSPipe
        do {
            pipe = try GPSPipe(port: fake.port, launcher: launcher)
        } catch {
            fake.stop()
            throw error
        }
        let source = Source(
            port: fake.port,
            pipeReady: { fake.atGate && pipe.process.stdout().contains("\"class\":\"WATCH\"") },
            release: { fake.release() }, finished: { !fake.process.isRunning },
            stop: {
                fake.stop()
                pipe.waitForExit(timeout: 15)
            },
            pipeOutput: { pipe.objects() })
        return (source, fake, pipe)
    }

    /// Runs the replay. `window` ends it that many seconds after the start
    /// (the issue's first minute); nil lets it run to the end of the log.
    public init(source: Source, policies: [[String: Any]], window: Double? = nil, timeout: Double = 300) throws {
        try Self.waitUntil(timeout: 15, "gpsfake at its gate and gpspipe's watch") { source.pipeReady() }
        let daemon = try DaemonProcess(gpsdPort: source.port, config: "[track]\nenable = no\n")
        defer { daemon.stop() }
        let (rawClient, _) = try daemon.connect()
        guard try rawClient.request("observe", ["keyPath": "rawLocation"]).ok == true else {
            throw Failure(description: "observe rawLocation refused")
        }
        var clients: [SocketClient] = []
        for policy in policies {
            let (client, _) = try daemon.connect()
            let reply = try client.request("startUpdatingLocation", ["policy": policy])
            guard reply.ok == true else { throw Failure(description: "startUpdatingLocation \(policy): \(reply)") }
            clients.append(client)
        }
        try Self.waitUntil(timeout: 15, "gpsd confirming aklocd's watch") {
            daemon.process.stderr().contains("gpsd confirmed the watch")
        }
        streams = Array(repeating: [], count: clients.count)
        let readers = ([rawClient] + clients).enumerated().map { index, client in
            let done = DispatchSemaphore(value: 0)
            let thread = Thread { [self] in
                defer { done.signal() }
                while let line = try? client.readLine(timeout: timeout) {
                    let at = Self.monotonicNow()
                    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                    else { continue }
                    lock.lock()
                    if index == 0 {
                        raw.append(Arrival(at: at, message: object))
                    } else {
                        streams[index - 1].append(Arrival(at: at, message: object))
                    }
                    lock.unlock()
                    if object["notification"] as? String == "sourceDisconnected" { return }
                }
            }
            thread.start()
            return done
        }
        source.release()
        if let window {
            try? Self.waitUntil(timeout: window, "") { source.finished() }
        } else {
            try Self.waitUntil(timeout: timeout, "the end of the replay") { source.finished() }
        }
        source.stop()
        for done in readers { _ = done.wait(timeout: .now() + 30) }
        tpvs = source.pipeOutput().filter { $0["class"] as? String == "TPV" }
        daemonLog = daemon.process.stderr()
    }

    /// aklocd's `rawLocation` epochs with the receiver's time, in order.
    public var rawEpochs: [FixEpoch] {
        raw.compactMap { arrival in
            guard arrival.message["event"] as? String == "change",
                let new = arrival.message["new"] as? [String: Any]
            else { return nil }
            return FixEpoch(wire: new)
        }
    }

    /// Each policy subscriber's deliveries: when they arrived, the location,
    /// and aklocd's `afterTimeInterval`.
    public func deliveries(_ index: Int) -> [(at: Double, location: [String: Any], after: Double?)] {
        streams[index].compactMap { arrival in
            guard arrival.message["event"] as? String == "didUpdateLocation",
                let location = arrival.message["location"] as? [String: Any]
            else { return nil }
            return (arrival.at, location, arrival.message["afterTimeInterval"] as? Double)
        }
    }

    static func monotonicNow() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Polls `condition` every 10 ms until it holds; throws after `timeout`.
    static func waitUntil(timeout: Double, _ what: String, _ condition: () -> Bool) throws {
        let deadline = monotonicNow() + timeout
        while !condition() {
            guard monotonicNow() < deadline else { throw Failure(description: "timed out waiting for \(what)") }
            usleep(10_000)
        }
    }
}

extension [String: Any] {
    fileprivate var ok: Bool? { self["ok"] as? Bool }
}
