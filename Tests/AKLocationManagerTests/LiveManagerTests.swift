import AKLocationManager
import AklocCore
import AklocGeo
import AklocProtocol
import AklocTestSupport
import Dispatch
import Foundation
import Testing

/// AKLocationManager against the real aklocd reading a real gpsd (gpsfake
/// replaying a capture), each on its own port and private socket: the
/// delegate, observers, `events`, `location(timeout:)`, the first-fix error,
/// and reconnecting when aklocd is killed and started again.
@Suite(.serialized, .enabled(if: GPSDTools.shouldRun, "skipped: \(GPSDTools.missingMessage)"))
struct LiveManagerTests {
    /// gpsfake and aklocd; stopped (by pid) at deinit.
    final class Replay {
        let fake: GPSFake
        let daemon: DaemonProcess

        init(log: String, cycle: Double, config: String = "") throws {
            fake = try GPSFake.start(log: GPSFake.bundledLog(log), cycle: cycle)
            do {
                daemon = try DaemonProcess(gpsdPort: fake.port, config: config)
            } catch {
                fake.stop()
                throw error
            }
        }

        deinit {
            daemon.stop()
            fake.stop()
        }
    }

    static func toolsPresent() -> Bool {
        guard GPSDTools.available else {
            Issue.record("AKLOC_REQUIRE_TOOLS=1 and \(GPSDTools.missingMessage)")
            return false
        }
        return true
    }

    @Test func delegateObserverAndEventsFollowALiveReplay() async throws {
        guard Self.toolsPresent() else { return }
        // A powerboat at 2-3 m/s: about one fix a second for 20 s.
        let replay = try Replay(log: "humminbird-M37", cycle: 0.2)
        let recorder = Recorder()
        let manager = AKLocationManager(socketPath: replay.daemon.socketPath, callbackQueue: recorder.queue)
        let events = manager.events
        #expect(manager.updateSpeed == 0.4)
        #expect(manager.updateLocationTimeInterval == (min: 5, max: 300))
        #expect(manager.firstLocationAttempts == 5)
        #expect(manager.myLocation == nil)
        manager.delegate = recorder
        manager.updateLocationTimeInterval = (min: 1, max: 10)
        manager.addObserver(recorder, forKeyPath: "myLocation")
        manager.startUpdatingLocation()

        let first = try recorder.wait { if case .first = $0 { true } else { false } }
        guard case .first(let location) = first else { return }
        #expect(abs(location.coordinate.latitude - 44.435) < 0.01)
        var intervals: [Double] = []
        while intervals.count < 4 {
            if case .update(_, let interval?) = try recorder.wait({
                if case .update(_, .some) = $0 { true } else { false }
            }) {
                intervals.append(interval)
            }
        }
        // Every update waited at least the minimum, and came at the first fix past it.
        #expect(intervals.allSatisfy { $0 >= 1 && $0 < 2.5 }, "\(intervals)")
        let change = try recorder.wait { if case .change = $0 { true } else { false } }
        if case .change(let value) = change {
            #expect(value.keyPath == "myLocation")
            #expect(value.newLocation.map { abs($0.latitude - 44.435) < 0.01 } == true)
        }
        // Daemon-wide notifications: an admin pauses and resumes; the first-fix loop reruns.
        let (admin, _) = try replay.daemon.connect()
        #expect(try admin.request("pause")["ok"] as? Bool == true)
        _ = try recorder.wait { $0 == .notification(.paused) }
        #expect(try admin.request("resume")["ok"] as? Bool == true)
        _ = try recorder.wait { $0 == .notification(.resumed) }
        _ = try recorder.wait { if case .first = $0 { true } else { false } }
        #expect(manager.myLocation != nil)
        #expect(manager.connectionState == .connected)
        #expect(manager.authorizationStatus == .authorizedAlways)

        // requestLocation answers through didUpdateLocation without an interval.
        manager.requestLocation()
        _ = try recorder.wait { if case .update(_, nil) = $0 { true } else { false } }
        let fresh = try await manager.location(timeout: 5)
        #expect(abs(fresh.longitude + 71.676) < 0.01)

        // The stream saw what the delegate saw.
        let seen = try await Self.collect(events) { event in
            if case .didUpdateLocation(_, .some) = event { true } else { false }
        }
        #expect(seen.contains { if case .didGetFirstLocation = $0 { true } else { false } })
        #expect(seen.contains(.connectionStateChanged(.connected)))

        manager.stopUpdatingLocation()
        manager.removeObserver()
        #expect(recorder.allOnCallbackQueue)
        #expect(!recorder.entries.contains { if case .error = $0 { true } else { false } }, "\(recorder.entries)")
    }

    @Test func theFirstLocationErrorComesAfterTheManagersAttempts() async throws {
        guard Self.toolsPresent() else { return }
        // A SiRF receiver that never gets a fix.
        let replay = try Replay(log: "bu303-nofix", cycle: 0.1)
        let recorder = Recorder()
        let manager = AKLocationManager(socketPath: replay.daemon.socketPath, callbackQueue: recorder.queue)
        manager.delegate = recorder
        manager.firstLocationAttempts = 2
        let started = Date()
        manager.startUpdatingLocation()
        _ = try recorder.wait { $0 == .error(.locationManagerCantDetectFirstLocation) }
        // Attempts at 0 s and 1 s; the second failure is the error.
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 0.9 && elapsed < 4, "\(elapsed)")
        // aklocd's own loop (5 attempts) reports at 4 s; its error is not passed on.
        do {
            _ = try await manager.location(timeout: 5)
            Issue.record("a location from a receiver without a fix")
        } catch {
            #expect(error.code == "timeout", "\(error)")
        }
        let errors = recorder.entries.filter { $0 == .error(.locationManagerCantDetectFirstLocation) }
        #expect(errors.count == 1, "\(recorder.entries)")
        #expect(!recorder.entries.contains { if case .first = $0 { true } else { false } })
    }

    @Test func itReconnectsWhenAklocdIsKilledAndRestartedAndResubscribes() async throws {
        guard Self.toolsPresent() else { return }
        let replay = try Replay(log: "humminbird-M37", cycle: 0.25)
        let recorder = Recorder()
        let manager = AKLocationManager(socketPath: replay.daemon.socketPath, callbackQueue: recorder.queue)
        manager.delegate = recorder
        manager.updateLocationTimeInterval = (min: 1, max: 10)
        manager.addObserver(recorder, forKeyPath: "rawLocation.coordinate")
        manager.startUpdatingLocation()
        _ = try recorder.wait { if case .first = $0 { true } else { false } }
        _ = try recorder.wait { if case .change = $0 { true } else { false } }

        try replay.daemon.restart()
        let lost = try recorder.wait { if case .error = $0 { true } else { false } }
        #expect(lost.errorCode == "connection", "\(lost)")
        _ = try recorder.wait { if case .state(.waitingToReconnect) = $0 { true } else { false } }
        _ = try recorder.wait { $0 == .state(.connected) }
        // Both subscriptions were sent again: a new first location, then changes and updates.
        _ = try recorder.wait { if case .first = $0 { true } else { false } }
        _ = try recorder.wait { if case .change = $0 { true } else { false } }
        _ = try recorder.wait { if case .update(_, .some) = $0 { true } else { false } }
        #expect(manager.connectionState == .connected)
        let errors = recorder.entries.filter { if case .error = $0 { true } else { false } }
        #expect(errors.count == 1, "one error for the outage: \(errors)")
    }

    @Test func theExampleRunsAsAnotherUserAndSeesTheAuthorizationNotifications() throws {
        guard Self.toolsPresent() else { return }
        guard SystemAccounts.available else {
            Issue.record("\(SystemAccounts.unavailableMessage)")
            return
        }
        let replay = try Replay(log: "humminbird-M37", cycle: 0.2)
        let accounts = SystemAccounts()
        defer { accounts.removeAll() }
        let user = try accounts.addUser()
        let example = Binaries.directory.appendingPathComponent("where-am-i-swift").path
        let process = try TestProcess(
            "setpriv", ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", example, "--updates", "1"],
            environment: ["AKLOC_SOCKET": replay.daemon.socketPath])
        defer { process.kill() }
        let status = process.waitForExit(timeout: 60)
        let lines = process.stdout().split(separator: "\n").map(String.init)
        #expect(status == 0, "\(lines) \(process.stderr())")
        // No rule for this user: notDetermined, so startUpdatingLocationWithRequest asks first.
        #expect(
            Array(lines.prefix(2)) == ["notification userAuthorizedWhenInUse", "notification authorizedWhenInUse"],
            "\(lines)")
        #expect(lines.contains { $0.hasPrefix("first 44.4") }, "\(lines)")
        #expect(lines.last?.hasPrefix("update 44.4") == true, "\(lines)")
    }

    @Test func theExamplesAsyncModesPrintLocations() throws {
        guard Self.toolsPresent() else { return }
        let replay = try Replay(log: "humminbird-M37", cycle: 0.2)
        let example = Binaries.directory.appendingPathComponent("where-am-i-swift").path
        for (arguments, prefix, count) in [(["--once"], "here 44.4", 1), (["--events", "2"], "event 44.4", 2)] {
            let process = try TestProcess(
                example, arguments, environment: ["AKLOC_SOCKET": replay.daemon.socketPath])
            defer { process.kill() }
            let status = process.waitForExit(timeout: 60)
            let lines = process.stdout().split(separator: "\n").filter { $0.hasPrefix(prefix) }
            #expect(status == 0 && lines.count == count, "\(arguments): \(process.stdout()) \(process.stderr())")
        }
    }

    /// Events from `stream` up to and including the first that matches (bounded).
    @Test func visitsArriveThenDepartThroughTheDelegateAsTheHistoryHasThem() throws {
        guard Self.toolsPresent() else { return }
        // bundg_zeus_9, a boat at about 3 m/s for 147 s, replayed at its own
        // pace: with a 50 m radius and 10 s, its first 16 s are a visit and
        // the way on beyond 100 m is the departure (docs/timeline.md).
        let replay = try Replay(
            log: "bundg_zeus_9", cycle: 0.03,
            config: "[timeline]\nradius = 50\nmin-time = 10\n"
                + "[geo]\ndata-dir = \(Binaries.packageRoot.appendingPathComponent("data").path)\n")
        let recorder = Recorder()
        let manager = AKLocationManager(socketPath: replay.daemon.socketPath, callbackQueue: recorder.queue)
        manager.delegate = recorder
        manager.startMonitoringVisits()
        let arrived = try recorder.wait(timeout: 120) { if case .visit = $0 { true } else { false } }
        guard case .visit(let arrival) = arrived else { return }
        #expect(arrival.departure == nil, "a visit is told first at its arrival")
        #expect(abs(arrival.coordinate.latitude - 52.85) < 0.05, "\(arrival.coordinate)")
        // With the geo data, the visit is named where it is (the IJsselmeer, off Enkhuizen).
        #expect(arrival.country?.code == "NL", "\(arrival)")
        #expect(arrival.timeZone?.identifier == "Europe/Amsterdam", "\(arrival)")
        #expect(arrival.placemark?.isoCountryCode == "NL", "\(arrival)")
        let departed = try recorder.wait(timeout: 120) { if case .visit = $0 { true } else { false } }
        guard case .visit(let departure) = departed else { return }
        #expect(departure.arrival == arrival.arrival, "then the same visit")
        let left = try #require(departure.departure, "with its departure")
        #expect(left > arrival.arrival)
        #expect(departure.radius <= 50)
        // The history over the same fixes has the same visit, departure and all.
        let (client, _) = try replay.daemon.connect()
        let history = try client.request("visits", ["since": Int(Date().timeIntervalSince1970) - 3600])
        let computed = try #require((history["result"] as? [String: Any])?["visits"] as? [[String: Any]], "\(history)")
        #expect(computed.first?["arrival"] as? String == arrival.arrival.iso8601, "\(computed)")
        #expect(computed.first?["departure"] as? String == left.iso8601, "\(computed)")
        manager.stopMonitoringVisits()
        #expect(!recorder.entries.contains { $0.errorCode != nil }, "\(recorder.entries.map(\.summary))")
    }

    static func collect(
        _ stream: AsyncStream<AKLocationManagerEvent>, timeout: Double = 30,
        until match: @escaping @Sendable (AKLocationManagerEvent) -> Bool
    ) async throws -> [AKLocationManagerEvent] {
        try await withThrowingTaskGroup(of: [AKLocationManagerEvent]?.self) { group in
            group.addTask {
                var seen: [AKLocationManagerEvent] = []
                for await event in stream {
                    seen.append(event)
                    if match(event) { return seen }
                }
                return seen
            }
            group.addTask {
                try await Task.sleep(nanoseconds: UInt64(timeout * 1e9))
                return nil
            }
            defer { group.cancelAll() }
            guard let seen = try await group.next() ?? nil else {
                throw SocketClient.Failure("no matching event within \(timeout) s")
            }
            return seen
        }
    }
}

/// A delegate and observer that records every callback, with the queue it came on.
final class Recorder: AKLocationManagerDelegate, AKLocationManagerObserver, @unchecked Sendable {
    // @unchecked: `entries` is guarded by `condition`.
    enum Entry: Equatable {
        case first(CLLocation)
        case update(CLLocation, Double?)
        case error(AKLocationManagerError)
        case notification(AKLocationManagerNotification)
        case change(AKLocationManagerChange)
        case state(AKLocationManagerConnectionState)
        case visit(CLVisit)

        /// Short, for failure messages.
        var summary: String {
            switch self {
            case .first: "first"
            case .update(_, let interval): "update(\(interval.map { String($0) } ?? "-"))"
            case .error(let error): "error(\(error))"
            case .notification(let notification): notification.rawValue
            case .change(let change): "change(\(change.keyPath))"
            case .state(let state): "state(\(state))"
            case .visit(let visit): "visit(\(visit.arrival.iso8601)–\(visit.departure?.iso8601 ?? ""))"
            }
        }

        var errorCode: String? {
            if case .error(let error) = self { return error.code }
            return nil
        }
    }

    let queue = DispatchQueue(label: "test.callbacks")
    private let key = DispatchSpecificKey<Bool>()
    private let condition = NSCondition()
    private var recorded: [Entry] = []
    private var cursor = 0
    private var offQueue = 0

    init() {
        queue.setSpecific(key: key, value: true)
    }

    var entries: [Entry] {
        condition.lock()
        defer { condition.unlock() }
        return recorded
    }

    var allOnCallbackQueue: Bool {
        condition.lock()
        defer { condition.unlock() }
        return offQueue == 0
    }

    private func record(_ entry: Entry) {
        let onQueue = DispatchQueue.getSpecific(key: key) == true
        condition.lock()
        recorded.append(entry)
        if !onQueue { offQueue += 1 }
        condition.broadcast()
        condition.unlock()
    }

    /// The next entry (after the last one returned) that matches, waiting up to `timeout` seconds.
    func wait(timeout: Double = 30, _ match: (Entry) -> Bool) throws -> Entry {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            while cursor < recorded.count {
                let entry = recorded[cursor]
                cursor += 1
                if match(entry) { return entry }
            }
            guard condition.wait(until: deadline) else {
                let names = recorded.map(\.summary).joined(separator: " ")
                throw SocketClient.Failure("no matching callback within \(timeout) s; got \(names)")
            }
        }
    }

    func locationManager(_ manager: AKLocationManager, didGetFirstLocation location: CLLocation) {
        record(.first(location))
    }

    func locationManager(_ manager: AKLocationManager, didUpdateLocation location: CLLocation) {
        record(.update(location, nil))
    }

    func locationManager(
        _ manager: AKLocationManager, didUpdateLocation location: CLLocation, afterTimeInterval timeInterval: Double
    ) {
        record(.update(location, timeInterval))
    }

    func locationManager(_ manager: AKLocationManager, didVisit visit: CLVisit) {
        record(.visit(visit))
    }

    func locationManager(_ manager: AKLocationManager, didGetError error: AKLocationManagerError) {
        record(.error(error))
    }

    func locationManager(_ manager: AKLocationManager, didGetNotification notification: AKLocationManagerNotification) {
        record(.notification(notification))
    }

    func locationManager(_ manager: AKLocationManager, didChangeConnectionState state: AKLocationManagerConnectionState)
    {
        record(.state(state))
    }

    func observeValue(forKeyPath keyPath: String, of manager: AKLocationManager, change: AKLocationManagerChange) {
        record(.change(change))
    }
}
