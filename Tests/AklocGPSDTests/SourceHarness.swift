import AklocCore
import AklocGPSD
import AklocPosix
import Dispatch
import Foundation

/// Runs a `GPSDSource` on its own serial queue, as the daemon does, and
/// records its events and log lines for a test thread to wait on.
final class SourceHarness: @unchecked Sendable {
    // @unchecked: `source` is touched only inside `queue.sync`; the records are guarded by `condition`.

    struct Record {
        var event: GPSDSource.Event
        /// Monotonic receipt time.
        var at: Instant
    }

    /// GPSDSource's log line on gpsd's answer to ?WATCH: from then on gpsd
    /// sends the source every report, so a gated replay may be released.
    static let watchConfirmed = "gpsd confirmed the watch"

    let queue = DispatchQueue(label: "akloc.test.gpsd-source")
    private var source: GPSDSource?
    private let condition = NSCondition()
    private var records: [Record] = []
    private var logLines: [String] = []

    init(
        endpoint: GPSDEndpoint, device: String? = nil, backoff: Backoff = Backoff(), handshakeTimeout: Double = 5
    ) {
        queue.sync {
            let source = GPSDSource(
                endpoint: endpoint, device: device, queue: queue,
                log: { [weak self] level, message in self?.appendLog("\(level): \(message)") },
                backoff: backoff, handshakeTimeout: handshakeTimeout)
            source.onEvent = { [weak self] event in self?.append(event) }
            self.source = source
        }
    }

    deinit {
        stop()
    }

    /// Starts the source with the watch on.
    func start() {
        queue.sync {
            source?.setWatch(true)
            source?.start()
        }
    }

    /// Runs `body` on the source's queue with the source, blocking that queue meanwhile.
    func onQueue(_ body: (GPSDSource) -> Void) {
        queue.sync {
            if let source { body(source) }
        }
    }

    func setWatch(_ enabled: Bool) {
        queue.sync { source?.setWatch(enabled) }
    }

    func stop() {
        queue.sync {
            source?.stop()
            source = nil
        }
    }

    var status: GPSDSource.Status? { queue.sync { source?.status } }

    /// Polls the source's status (on its queue) until `predicate` holds, bounded.
    @discardableResult
    func waitForStatus(timeout: Double, _ predicate: (GPSDSource.Status) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let status, predicate(status) { return true }
            usleep(10_000)
        }
        return false
    }

    var events: [Record] {
        condition.lock()
        defer { condition.unlock() }
        return records
    }

    var logs: [String] {
        condition.lock()
        defer { condition.unlock() }
        return logLines
    }

    var noFixCount: Int {
        events.filter {
            if case .noFix = $0.event { return true }
            return false
        }.count
    }

    var fixes: [Location] {
        events.compactMap {
            if case .fix(let location) = $0.event { return location }
            return nil
        }
    }

    /// Connection events only, in order: "connected" / "disconnected".
    var connectionEvents: [String] {
        events.compactMap {
            switch $0.event {
            case .connected: return "connected"
            case .disconnected: return "disconnected"
            default: return nil
            }
        }
    }

    /// Blocks until `predicate` holds for the records, or `timeout` seconds pass.
    @discardableResult
    func wait(timeout: Double, until predicate: ([Record]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(records) {
            if !condition.wait(until: deadline) { return predicate(records) }
        }
        return true
    }

    /// Blocks until `count` log lines contain `text`, or `timeout` seconds pass.
    @discardableResult
    func waitForLog(containing text: String, count: Int = 1, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while logLines.filter({ $0.contains(text) }).count < count {
            if !condition.wait(until: deadline) { return logLines.filter { $0.contains(text) }.count >= count }
        }
        return true
    }

    /// Waits until at least `count` events after index `from` match.
    @discardableResult
    func wait(
        for count: Int = 1, after from: Int = 0, timeout: Double, _ matches: @escaping (GPSDSource.Event) -> Bool
    ) -> Bool {
        wait(timeout: timeout) { records in
            records.dropFirst(from).filter { matches($0.event) }.count >= count
        }
    }

    private func append(_ event: GPSDSource.Event) {
        condition.lock()
        records.append(Record(event: event, at: SystemClock.monotonicNow()))
        condition.broadcast()
        condition.unlock()
    }

    private func appendLog(_ line: String) {
        condition.lock()
        logLines.append(line)
        condition.broadcast()
        condition.unlock()
    }
}

extension GPSDSource.Event {
    var isConnected: Bool {
        if case .connected = self { return true }
        return false
    }

    var isDisconnected: Bool {
        if case .disconnected = self { return true }
        return false
    }

    var isFix: Bool {
        if case .fix = self { return true }
        return false
    }
}
