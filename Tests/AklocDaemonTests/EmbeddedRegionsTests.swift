import AklocCore
import AklocGPSD
import Testing

@testable import AklocDaemon

/// Region monitoring wired into the whole daemon on virtual time: the shell
/// feeds each monitoring client's monitor the epochs it may be told.
@Suite struct EmbeddedRegionsTests {
    /// One fix a second walking north through latitude 50 (about 11 m a
    /// step, accuracy 5 m); the events each client received, in order.
    private func walk(
        _ daemon: EmbeddedDaemon, _ clients: [MemoryTransport], steps: ClosedRange<Int>,
        between: (Int) -> Void = { _ in }
    ) -> [[[String: Any]]] {
        var received = Array(repeating: [[String: Any]](), count: clients.count)
        for step in steps {
            between(step)
            daemon.fix(latitude: 50 + Double(step) * 1e-4)
            daemon.advance(by: 1)
            for (index, client) in clients.enumerated() { received[index] += daemon.receive(client) }
        }
        return received
    }

    /// A connected client that saved "Gate" (50 m around 50 N 10 E) and
    /// monitors it (`places` is extra startMonitoring members).
    private func monitorGate(_ daemon: EmbeddedDaemon, places: String = "") -> MemoryTransport {
        daemon.emit(.connected(name: "manual://test"))
        let walker = daemon.connect(uid: 0)
        _ = daemon.receive(walker)
        daemon.send(
            #"{"id":1,"op":"savePlace","name":"Gate","coordinate":{"latitude":50,"longitude":10},"radius":50}"#,
            from: walker)
        daemon.send(#"{"id":2,"op":"startMonitoring"\#(places)}"#, from: walker)
        _ = daemon.receive(walker)
        return walker
    }

    private func names(_ messages: [[String: Any]]) -> [String] {
        messages.compactMap { $0["event"] as? String }.filter { $0.hasSuffix("Region") }
    }

    @Test func aMonitoringClientEntersAndLeavesOnceAndOthersHearNothing() throws {
        let daemon = try EmbeddedDaemon()
        defer { daemon.stop() }
        daemon.emit(.connected(name: "manual://test"))
        let walker = daemon.connect(uid: 0)
        let bystander = daemon.connect(uid: 0)
        _ = daemon.receive(walker) + daemon.receive(bystander)
        daemon.send(
            #"{"id":1,"op":"savePlace","name":"Gate","coordinate":{"latitude":50,"longitude":10},"radius":50}"#,
            from: walker)
        daemon.send(#"{"id":2,"op":"startMonitoring"}"#, from: walker)
        daemon.send(#"{"id":3,"op":"observe","keyPath":"regions","options":["old"]}"#, from: walker)
        let replies = daemon.receive(walker)
        #expect(replies.filter { $0["ok"] as? Bool == true }.count == 3, "\(replies)")
        #expect(daemon.source.watching, "monitoring alone keeps the gpsd watch open")

        let received = walk(daemon, [walker, bystander], steps: -12...12)
        #expect(names(received[0]) == ["didEnterRegion", "didExitRegion"], "\(received[0])")
        #expect(names(received[1]).isEmpty)
        let entered = try #require(received[0].first { $0["event"] as? String == "didEnterRegion" })
        let location = try #require(entered["location"] as? [String: Any])
        let latitude = try #require(location["latitude"] as? Double)
        // Enter needs distance + 5 m < 50 m: the first step past 45 m south.
        #expect(latitude > 50 - 45 / 111_200 && latitude < 50 - 30 / 111_200, "\(latitude)")
        let changes = received[0].filter { $0["keyPath"] as? String == "regions" }
        #expect(changes.map { $0["new"] as? [String] ?? ["?"] } == [["Gate"], []])
        #expect(changes.map { $0["old"] as? [String] ?? ["?"] } == [[], ["Gate"]])

        // Leaving the connection ends its monitoring and the watch.
        daemon.onQueue { _ in walker.hangUp() }
        daemon.advance(by: 0.1)
        #expect(!daemon.source.watching)
    }

    @Test func noEventsWhilePausedOrForTheFixesNotGiven() throws {
        let daemon = try EmbeddedDaemon()
        defer { daemon.stop() }
        let walker = monitorGate(daemon, places: #","places":["Gate"]"#)
        // Paused through the whole region: the monitor never saw the device inside.
        let received = walk(daemon, [walker], steps: -12...12) { step in
            if step == -8 { daemon.send(#"{"id":3,"op":"pause"}"#, from: walker) }
            if step == 8 { daemon.send(#"{"id":4,"op":"resume"}"#, from: walker) }
        }
        #expect(names(received[0]).isEmpty, "\(received[0])")
        // Stopping: later crossings are not reported.
        daemon.send(#"{"id":5,"op":"stopMonitoring"}"#, from: walker)
        let after = walk(daemon, [walker], steps: -12...12)
        #expect(names(after[0]).isEmpty)
        #expect(!daemon.source.watching)
    }

    @Test func deletingThePlaceYouAreInLeavesRegionsWithoutAnExit() throws {
        let daemon = try EmbeddedDaemon()
        defer { daemon.stop() }
        let walker = monitorGate(daemon)
        daemon.send(#"{"id":3,"op":"observe","keyPath":"regions"}"#, from: walker)
        _ = daemon.receive(walker)
        let inside = walk(daemon, [walker], steps: -6...0)
        #expect(names(inside[0]) == ["didEnterRegion"])
        daemon.send(#"{"id":4,"op":"deletePlace","name":"Gate"}"#, from: walker)
        let deleted = daemon.receive(walker)
        #expect(deleted.compactMap { $0["new"] as? [String] } == [[]], "\(deleted)")
        #expect(names(deleted).isEmpty, "a deleted place is dropped without an event")
        #expect(deleted.contains { $0["id"] as? Int == 4 && $0["ok"] as? Bool == true })
    }
}
