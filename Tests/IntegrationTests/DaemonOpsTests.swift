import AklocTestSupport
import Foundation
import Testing

/// aklocd against real gpsd, driven over its real socket by raw clients: each
/// op and key path of DESIGN §3, cadences per policy, requestLocation, pause.
@Suite(.serialized, .enabled(if: GPSDTools.shouldRun, "skipped: \(GPSDTools.missingMessage)"))
struct DaemonOpsTests {
    @Test func helloAndEveryOpAndKeyPath() throws {
        guard LiveReplay.requireTools() else { return }
        // A powerboat at 2-3 m/s: 100 sentences at 0.1 s, about one fix a second.
        let replay = try LiveReplay(log: "humminbird-M37", cycle: 0.1)
        let (client, hello) = try replay.daemon.connect()
        #expect(hello.event == "hello")
        #expect(hello["protocol"] as? Int == 1)
        #expect((hello["version"] as? String)?.isEmpty == false)
        #expect(hello["authorizationStatus"] as? String == "authorizedAlways")

        var seen: [[String: Any]] = []
        let keep: ([String: Any]) -> Void = { seen.append($0) }

        #expect(try client.request("get", ["keyPath": "authorizationStatus"]).result as? String == "authorizedAlways")
        let state = try client.request("get", ["keyPath": "state"]).result as? String
        #expect(["searching", "running", "sourceUnavailable"].contains(state ?? "?"))
        #expect(try client.request("get", ["keyPath": "noSuchPath"]).errorCode == "unknownKeyPath")
        #expect(try client.request("get", ["keyPath": "myLocation.noSuchMember"]).errorCode == "unknownKeyPath")

        // observe with `initial` answers at once with the current value.
        let stateObserved = try client.request(
            "observe", ["keyPath": "state", "options": ["initial", "old"]], skipped: keep)
        #expect(stateObserved.ok == true)
        #expect(seen.contains { $0.event == "change" && $0["keyPath"] as? String == "state" })
        #expect(try client.request("observe", ["keyPath": "rawLocation.coordinate"], skipped: keep).ok == true)
        #expect(
            try client.request(
                "startUpdatingLocation", ["policy": ["minInterval": 1, "maxInterval": 10]], skipped: keep
            ).ok == true)

        let first = try client.waitFor(timeout: 30, skipped: keep) { $0.event == "didGetFirstLocation" }
        #expect(first.location?["latitude"] as? Double != nil)
        let update = try client.waitFor(timeout: 30, skipped: keep) { $0.event == "didUpdateLocation" }
        let location = try #require(update.location)
        #expect((location["latitude"] as? Double).map { abs($0 - 44.435) < 0.01 } == true)
        #expect(location["mode"] as? String == "2d" || location["mode"] as? String == "3d")
        #expect(location["timestamp"] as? String != nil && location["receivedAt"] as? String != nil)
        #expect(location.values.allSatisfy { !($0 is NSNull) }, "unknown fields are omitted, never null")
        let coordinate = try client.waitFor(timeout: 30, skipped: keep) {
            $0.event == "change" && $0["keyPath"] as? String == "rawLocation.coordinate"
        }
        let new = try #require(coordinate["new"] as? [String: Any])
        #expect(Set(new.keys) == ["latitude", "longitude"])

        let running = try client.waitFor(timeout: 30, skipped: keep) {
            $0.event == "change" && $0["keyPath"] as? String == "state" && $0["new"] as? String == "running"
        }
        #expect(running["old"] != nil, "the `old` option includes the previous value")

        let got = try client.request("get", ["keyPath": "myLocation"], skipped: keep)
        #expect((got.result as? [String: Any])?["longitude"] as? Double != nil)
        #expect(try client.request("get", ["keyPath": "myLocation.latitude"], skipped: keep).result as? Double != nil)
        #expect(try client.request("get", ["keyPath": "source"], skipped: keep).result as? String != nil)

        let requested = try client.request("requestLocation", ["timeout": 10], timeout: 15, skipped: keep)
        #expect((requested.result as? [String: Any])?["latitude"] as? Double != nil)

        #expect(try client.request("configure", ["policy": ["minInterval": 2]], skipped: keep).ok == true)
        #expect(
            try client.request("configure", ["policy": ["minInterval": -1]], skipped: keep).errorCode == "badRequest")
        #expect(try client.request("unobserve", ["keyPath": "state"], skipped: keep).ok == true)
        #expect(try client.request("unobserve", ["keyPath": "state"], skipped: keep).errorCode == "badRequest")

        // After stopUpdatingLocation no more delegate updates: the next two
        // rawLocation changes (the observation still runs) come with none between.
        #expect(try client.request("stopUpdatingLocation", skipped: keep).ok == true)
        var afterStop: [[String: Any]] = []
        for _ in 0..<2 {
            _ = try client.waitFor(timeout: 30, skipped: { afterStop.append($0) }) {
                $0.event == "change" && $0["keyPath"] as? String == "rawLocation.coordinate"
            }
        }
        #expect(!afterStop.contains { $0.isLocationEvent }, "delegate updates after stop: \(afterStop)")

        let status = try #require(try client.request("status", skipped: keep).result as? [String: Any])
        #expect(status["state"] as? String == "running")
        #expect((status["clients"] as? [String: Any])?["connected"] as? Int == 1)
        #expect((status["fix"] as? [String: Any])?["ageSeconds"] as? Double != nil)
        #expect(((status["counters"] as? [String: Any])?["fixesReceived"] as? Int ?? 0) > 0)
    }

    /// Two subscribers with min 1 s and min 5 s on one moving log each get their own cadence.
    @Test func twoPoliciesTwoCadences() throws {
        guard LiveReplay.requireTools() else { return }
        // 100 sentences at 0.2 s: 22 fixes over about 20 s, all above 2 m/s.
        let replay = try LiveReplay(log: "humminbird-M37", cycle: 0.2)
        let (fast, _) = try replay.daemon.connect()
        let (slow, _) = try replay.daemon.connect()
        _ = try fast.request("startUpdatingLocation", ["policy": ["minInterval": 1]])
        _ = try slow.request("startUpdatingLocation", ["policy": ["minInterval": 5]])

        func updates(_ client: SocketClient) throws -> [Double?] {
            var intervals: [Double?] = []
            // Until the replay ends and gpsd goes away.
            _ = try client.waitFor(timeout: 60) { message in
                if message.event == "didUpdateLocation" { intervals.append(message["afterTimeInterval"] as? Double) }
                return message.notification == "sourceDisconnected"
            }
            return intervals
        }
        let fastIntervals = try updates(fast)
        let slowIntervals = try updates(slow)
        // The first delivery is immediate (no interval); every later one waited at least its minimum.
        #expect(fastIntervals.first == .some(nil) && slowIntervals.first == .some(nil))
        let fastGaps = fastIntervals.compactMap { $0 }
        let slowGaps = slowIntervals.compactMap { $0 }
        #expect(fastGaps.allSatisfy { $0 >= 1 }, "\(fastGaps)")
        #expect(slowGaps.allSatisfy { $0 >= 5 }, "\(slowGaps)")
        // Delivered at the first fix past the threshold: never a whole extra minimum late.
        #expect(fastGaps.allSatisfy { $0 < 2.5 }, "\(fastGaps)")
        #expect(slowGaps.allSatisfy { $0 < 7.5 }, "\(slowGaps)")
        #expect(fastGaps.count >= 10, "\(fastGaps)")
        #expect(slowGaps.count >= 2 && slowGaps.count * 3 < fastGaps.count, "fast \(fastGaps) slow \(slowGaps)")
        print("cadence: min 1 s -> \(fastGaps.count + 1) deliveries, min 5 s -> \(slowGaps.count + 1)")
    }

    @Test func pauseAndResume() throws {
        guard LiveReplay.requireTools() else { return }
        let replay = try LiveReplay(log: "humminbird-M37", cycle: 0.2)
        let (admin, _) = try replay.daemon.connect()
        let (watcher, _) = try replay.daemon.connect()
        _ = try watcher.request("startUpdatingLocation", ["policy": ["minInterval": 1]])
        _ = try watcher.waitFor(timeout: 30) { $0.event == "didUpdateLocation" }

        #expect(try admin.request("pause").ok == true)
        // The watch is closed while paused, so gpsd can idle the receiver. The
        // queue is serial, so once a later request is answered the pause step
        // (and its log line) is complete.
        _ = try admin.request("status")
        #expect(replay.daemon.process.stderr().contains("gpsd watch disabled"))
        _ = try watcher.waitFor(timeout: 10) { $0.notification == "paused" }
        #expect(try watcher.request("get", ["keyPath": "state"]).result as? String == "paused")
        #expect(try watcher.request("requestLocation", ["timeout": 1]).errorCode == "unavailable")
        let pausedAt = Date()
        // While paused nothing location-related arrives: the admin's status
        // round trips bracket a stretch of the replay.
        var whilePaused: [[String: Any]] = []
        let pausedStatus = try #require(try admin.request("status").result as? [String: Any])
        #expect(pausedStatus["paused"] as? Bool == true)
        _ = try watcher.request("status", skipped: { whilePaused.append($0) })
        #expect(try admin.request("pause").ok == true, "pausing again is harmless")

        #expect(try admin.request("resume").ok == true)
        _ = try watcher.waitFor(timeout: 10, skipped: { whilePaused.append($0) }) { $0.notification == "resumed" }
        #expect(!whilePaused.contains { $0.isLocationEvent }, "\(whilePaused)")
        let forced = try watcher.waitFor(timeout: 30) { $0.event == "didUpdateLocation" }
        let interval = try #require(forced["afterTimeInterval"] as? Double)
        #expect(interval >= Date().timeIntervalSince(pausedAt) - 1, "afterTimeInterval spans the pause")
    }

    @Test func requestLocationTimesOutWithoutFixes() throws {
        guard LiveReplay.requireTools() else { return }
        // A receiver that never gets a fix.
        let replay = try LiveReplay(log: "bu303-nofix", cycle: 0.05)
        let (client, _) = try replay.daemon.connect()
        let started = Date()
        let reply = try client.request("requestLocation", ["timeout": 1.5], timeout: 10)
        #expect(reply.errorCode == "timeout")
        #expect(Date().timeIntervalSince(started) >= 1.4)
        #expect(try client.request("requestLocation", ["timeout": -1]).errorCode == "badRequest")
    }
}
