import AklocPosix
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Many short-lived clients beside steady subscribers, as issue 18 found the
/// daemon crashing: steady clients observe `rawLocation` and are read
/// continuously; churning threads open connections as fast as they can, send
/// one to five requests (or a half-written or garbage line), sometimes read a
/// reply, and close. Used by the churn test in `make test` (short) and by
/// `make soak` (long); bounded in time by `duration` and in rate by the
/// daemon, and it stops by itself.
public final class ChurnLoad: @unchecked Sendable {
    // @unchecked: counters are behind `lock`; the rest is immutable.

    public struct Sample: Sendable {
        /// Seconds since the load started.
        public var elapsed: Double
        /// Steady subscribers that got at least one change in this window.
        public var fedSubscribers: Int
        public var connections: Int
        public var openDescriptors: Int?
        public var residentKiB: Int?
        public var daemonRunning: Bool
    }

    private let socketPath: String
    private let steadyCount: Int
    private let threads: Int
    private let longWaitOneIn: Int
    private let lock = NSLock()
    private var changes: [Int]
    private var connectionCount = 0
    private var running = true
    private var steady: [SocketClient] = []
    private var workers: [Thread] = []

    /// `longWaitOneIn`: one connection in that many waits up to 1.2 s for a
    /// late reply (0: none does). The waits, not the daemon, set the rate:
    /// 20 gives about 100 connections a second with four threads, 0 several
    /// hundred, as the reporter ran it.
    public init(socketPath: String, steady: Int = 200, threads: Int = 4, longWaitOneIn: Int = 20) {
        self.socketPath = socketPath
        self.steadyCount = steady
        self.threads = threads
        self.longWaitOneIn = longWaitOneIn
        changes = Array(repeating: 0, count: steady)
    }

    deinit { stop() }

    /// Connects the steady subscribers (each observing `rawLocation`) and
    /// starts their reader and the churning threads.
    public func start() throws {
        for _ in 0..<steadyCount {
            let (client, _) = try Self.connect(socketPath)
            _ = try client.request("observe", ["keyPath": "rawLocation"])
            steady.append(client)
        }
        let reader = Thread { [self] in readSteady() }
        reader.start()
        workers.append(reader)
        for seed in 0..<threads {
            let worker = Thread { [self] in churn(seed: UInt64(seed) &+ 0x9E37_79B9) }
            worker.start()
            workers.append(worker)
        }
    }

    private static func connect(_ path: String) throws -> (SocketClient, [String: Any]) {
        let client = try SocketClient.connect(path: path)
        return (client, try client.readMessage())
    }

    public var isRunning: Bool { lock.withLock { running } }

    /// Stops the threads (each notices within a poll timeout) and closes the steady clients.
    public func stop() {
        lock.withLock { running = false }
        for worker in workers {
            while !worker.isFinished { usleep(1_000) }
        }
        workers.removeAll()
        steady.removeAll()
    }

    /// Counts changes per steady subscriber and resets them; and connections made so far.
    public func takeCounts() -> (changes: [Int], connections: Int) {
        lock.withLock {
            let taken = changes
            changes = Array(repeating: 0, count: steadyCount)
            return (taken, connectionCount)
        }
    }

    /// One reader for every steady subscriber: poll(2) over all of them,
    /// counting `change` events, so none falls behind into the daemon's hard limit.
    private func readSteady() {
        var pollers = steady.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        var pending = Array(repeating: [UInt8](), count: steady.count)
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let marker = Array("\"event\":\"change\"".utf8)
        while isRunning {
            let ready = poll(&pollers, nfds_t(pollers.count), 100)
            guard ready > 0 else { continue }
            var counted = Array(repeating: 0, count: steady.count)
            for index in pollers.indices where pollers[index].revents != 0 {
                let count = chunk.withUnsafeMutableBytes { recv(pollers[index].fd, $0.baseAddress, $0.count, 0) }
                if count <= 0 {
                    // The daemon closed a steady client: stop polling it; the test sees it unfed.
                    pollers[index].fd = -1
                    continue
                }
                pending[index].append(contentsOf: chunk[..<count])
                while let newline = pending[index].firstIndex(of: 10) {
                    if Self.contains(pending[index][..<newline], marker) { counted[index] += 1 }
                    pending[index].removeSubrange(...newline)
                }
            }
            lock.withLock {
                for index in counted.indices { changes[index] += counted[index] }
            }
        }
    }

    private static func contains(_ line: ArraySlice<UInt8>, _ marker: [UInt8]) -> Bool {
        guard line.count >= marker.count else { return false }
        var start = line.startIndex
        while start <= line.endIndex - marker.count {
            if line[start..<(start + marker.count)].elementsEqual(marker) { return true }
            start += 1
        }
        return false
    }

    private static let requests: [String] = [
        "{\"id\":1,\"op\":\"observe\",\"keyPath\":\"myLocation\",\"options\":{\"initial\":true}}\n",
        "{\"id\":2,\"op\":\"get\",\"keyPath\":\"myLocation.coordinate\"}\n",
        "{\"id\":3,\"op\":\"requestLocation\",\"timeout\":1}\n",
        "{\"id\":4,\"op\":\"unobserve\",\"keyPath\":\"myLocation\"}\n",
        "{\"id\":5,\"op\":\"startUpdatingLocation\",\"policy\":{\"minInterval\":0}}\n",
        "{\"id\":6,\"op\":\"observe\",\"keyPath\":\"rawLoc",
        "garbage, not JSON\n",
    ]

    /// Enough `status` requests that their replies fill the socket while the
    /// client does not read: the daemon then waits for writability (a second
    /// dispatch source on the descriptor) when the client closes.
    private static let flood = String(repeating: "{\"id\":8,\"op\":\"status\"}\n", count: 400)

    /// One churning thread: connect, send, maybe read, close, as fast as the daemon accepts.
    private func churn(seed: UInt64) {
        var random = SplitMix(seed: seed)
        var buffer = [UInt8](repeating: 0, count: 4096)
        guard let address = try? UnixSocketAddress(path: socketPath) else { return }
        while isRunning {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            guard (try? address.connect(fd)) != nil else { continue }
            lock.withLock { connectionCount += 1 }
            var text = ""
            for _ in 0..<(1 + random.next(5)) {
                text += Self.requests[random.next(Self.requests.count)]
            }
            if random.next(50) == 0 { text += Self.flood }
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // Half close at once, without reading; most others read what comes
            // within a moment (the hello, maybe a reply); one in
            // `longWaitOneIn` waits up to 1.2 s for more (a requestLocation's
            // answer, or its timeout).
            let patience =
                longWaitOneIn > 0 && random.next(longWaitOneIn) == 0 ? 1200 : random.next(2) == 0 ? 0 : 20
            let deadline = Date().addingTimeInterval(Double(patience) / 1000)
            while patience > 0, isRunning {
                let remaining = Int32(deadline.timeIntervalSinceNow * 1000)
                guard remaining > 0 else { break }
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, min(remaining, 100)) > 0 || remaining > 100 else { break }
                guard poller.revents != 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count <= 0 || patience == 20 { break }
            }
        }
    }

    /// A window's figures: which steady subscribers were fed since the last
    /// sample, and the daemon's descriptors and resident memory from /proc.
    public func sample(daemonPID: pid_t, elapsed: Double) -> Sample {
        let (counts, connections) = takeCounts()
        let running =
            Signal.processExists(daemonPID) && TestProcess.procStat(daemonPID).map { $0.state != "Z" } ?? false
        let descriptors = Self.openDescriptors(daemonPID)
        var resident: Int?
        if let status = try? String(contentsOfFile: "/proc/\(daemonPID)/status", encoding: .utf8) {
            for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
                resident = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
            }
        }
        return Sample(
            elapsed: elapsed, fedSubscribers: counts.filter { $0 > 0 }.count, connections: connections,
            openDescriptors: descriptors, residentKiB: resident, daemonRunning: running)
    }
}

extension ChurnLoad {
    /// How many descriptors `pid` has open, from /proc.
    public static func openDescriptors(_ pid: pid_t) -> Int? {
        try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
    }
}

/// A small deterministic generator, so a failing run's choices can be replayed by seed.
struct SplitMix {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Int(z % UInt64(bound))
    }
}
