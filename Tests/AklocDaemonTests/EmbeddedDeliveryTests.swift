import AklocCore
import AklocGPSD
import AklocPosix
import AklocTestSupport
import Testing

@testable import AklocDaemon

/// The whole daemon on virtual time: clients on in-memory pipes, fixes from
/// the test, timers that fire as the test advances the clock.
@Suite struct EmbeddedDeliveryTests {
    /// Walking fixes, one a second, for `seconds` seconds; returns the
    /// virtual seconds at which each client received a `didUpdateLocation`.
    private func walk(
        _ daemon: EmbeddedDaemon, _ clients: [MemoryTransport], seconds: Int, from start: Double = 50
    ) -> [[Double]] {
        var received = Array(repeating: [Double](), count: clients.count)
        for second in 0..<seconds {
            daemon.fix(latitude: start + Double(second) * 1e-5, speed: 1)
            daemon.advance(by: 1)
            for (index, client) in clients.enumerated() {
                let now = daemon.clock.now().seconds
                for message in daemon.receive(client) where message.embeddedEvent == "didUpdateLocation" {
                    received[index].append(now)
                }
            }
        }
        return received
    }

    @Test func helloThenThrottledDeliveryAndEveryEpochToAnObserver() throws {
        let daemon = try EmbeddedDaemon()
        defer { daemon.stop() }
        daemon.emit(.connected(name: "manual://test"))
        let walker = daemon.connect(uid: 0)
        let hello = daemon.receive(walker)
        #expect(hello.first?["event"] as? String == "hello")
        daemon.send(#"{"id":1,"op":"startUpdatingLocation"}"#, from: walker)
        let started = daemon.receive(walker)
        #expect(started.contains { $0["id"] as? Int == 1 && $0["ok"] as? Bool == true }, "\(started)")
        #expect(daemon.source.watching, "a client updating turns the gpsd watch on")

        let observer = daemon.connect(uid: 0)
        _ = daemon.receive(observer)
        daemon.send(#"{"id":7,"op":"observe","keyPath":"rawLocation"}"#, from: observer)
        _ = daemon.receive(observer)

        let received = walk(daemon, [walker, observer], seconds: 31)
        // Walking: the default policy delivers every 5 s (DESIGN §2), on the virtual clock.
        // The first epoch waits while the device's epoch shape is learned; then every 5 s.
        let steady = received[0].dropFirst()
        let intervals = zip(steady.dropFirst(), steady).map { $0 - $1 }
        #expect(received[0].count >= 6 && received[0].count <= 7, "\(received[0])")
        #expect(intervals.allSatisfy { abs($0 - 5) < 1e-6 }, "\(received[0])")

        // Stopping updates turns the watch off again once nobody needs fixes.
        daemon.send(#"{"id":2,"op":"stopUpdatingLocation"}"#, from: walker)
        daemon.send(#"{"id":8,"op":"unobserve","keyPath":"rawLocation"}"#, from: observer)
        #expect(!daemon.source.watching)
    }

    @Test func everyFixReachesAnObserverOfTheRawLocation() throws {
        let daemon = try EmbeddedDaemon()
        defer { daemon.stop() }
        daemon.emit(.connected(name: "manual://test"))
        let observer = daemon.connect()
        _ = daemon.receive(observer)
        daemon.send(#"{"id":1,"op":"observe","keyPath":"rawLocation"}"#, from: observer)
        _ = daemon.receive(observer)
        var latitudes: [Double] = []
        for second in 0..<20 {
            daemon.fix(latitude: 40 + Double(second) / 1000)
            daemon.advance(by: 1)
            for message in daemon.receive(observer) where message["event"] as? String == "change" {
                if let new = message["new"] as? [String: Any], let latitude = new["latitude"] as? Double {
                    latitudes.append(latitude)
                }
            }
        }
        // Every epoch, in order, none twice (the last may still be held back
        // while its epoch could grow).
        #expect(latitudes.count >= 19, "\(latitudes)")
        #expect(latitudes == latitudes.sorted())
        #expect(Set(latitudes).count == latitudes.count)
    }

    @Test func aPeerThatHangsUpLeavesTheEngine() throws {
        let daemon = try EmbeddedDaemon()
        defer { daemon.stop() }
        let first = daemon.connect()
        let second = daemon.connect()
        #expect(daemon.onQueue { $0.engine.snapshot.clients } == 2)
        daemon.onQueue { _ in first.hangUp() }
        #expect(daemon.onQueue { $0.engine.snapshot.clients } == 1)
        #expect(first.isClosed)
        #expect(!second.isClosed)
        #expect(daemon.onQueue { $0.server.clients.count } == 1)
    }

    @Test func stoppingTellsEveryClientAndStopsTheComponentsInReverse() throws {
        let daemon = try EmbeddedDaemon()
        let client = daemon.connect()
        _ = daemon.receive(client)
        #expect(daemon.source.running)
        daemon.stop()
        #expect(!daemon.source.running)
        #expect(client.isClosed)
        #expect(daemon.onQueue { $0.components.running } == 0)
        let messages = daemon.onQueue { _ in UncheckedBox(client.receive()) }.value
        #expect(messages.contains { $0.embeddedNotification == "daemonStopping" })
    }
}

/// gpsd going away and coming back, as clients see it.
@Suite struct EmbeddedReconnectTests {
    @Test func sourceDownAndUpReachClientsAndFixesFlowAgain() throws {
        let daemon = try EmbeddedDaemon()
        defer { daemon.stop() }
        let client = daemon.connect()
        _ = daemon.receive(client)
        daemon.send(#"{"id":1,"op":"observe","keyPath":"rawLocation"}"#, from: client)
        daemon.emit(.connected(name: "manual://test"))
        var messages = daemon.receive(client)
        #expect(messages.contains { $0.embeddedNotification == "sourceConnected" }, "\(messages)")

        daemon.fix(latitude: 1)
        daemon.advance(by: 1)
        daemon.emit(.disconnected(reason: "gpsd went away"))
        messages = daemon.receive(client)
        #expect(messages.contains { $0.embeddedNotification == "sourceDisconnected" }, "\(messages)")
        daemon.send(#"{"id":2,"op":"status"}"#, from: client)
        let down = daemon.receive(client).first { $0["id"] as? Int == 2 }
        #expect(((down?["result"] as? [String: Any])?["source"] as? [String: Any])?["connected"] as? Bool == false)

        // Minutes of outage on the virtual clock, then gpsd is back.
        daemon.advance(by: 300)
        daemon.emit(.connected(name: "manual://test"))
        daemon.fix(latitude: 2)
        daemon.advance(by: 1)
        daemon.fix(latitude: 3)
        daemon.advance(by: 1)
        messages = daemon.receive(client)
        #expect(messages.contains { $0.embeddedNotification == "sourceConnected" })
        let latitudes = messages.compactMap { ($0["new"] as? [String: Any])?["latitude"] as? Double }
        #expect(latitudes.contains(2), "\(messages)")
        daemon.send(#"{"id":3,"op":"status"}"#, from: client)
        let up = daemon.receive(client).first { $0["id"] as? Int == 3 }
        #expect(((up?["result"] as? [String: Any])?["source"] as? [String: Any])?["connected"] as? Bool == true)
        #expect(daemon.onQueue { $0.counters.sourceDisconnects } == 1)
    }
}

/// Slow readers on pipes that fill up: coalesced, then dropped past the hard limit.
@Suite struct EmbeddedSlowReaderTests {
    @Test func aFullPipeCoalescesLocationsAndKeepsEveryReply() throws {
        let daemon = try EmbeddedDaemon()
        defer { daemon.stop() }
        daemon.emit(.connected(name: "manual://test"))
        let slow = daemon.connect(capacity: 64)
        daemon.send(#"{"id":1,"op":"observe","keyPath":"rawLocation"}"#, from: slow)
        for second in 0..<50 {
            daemon.fix(latitude: 10 + Double(second) / 100)
            daemon.advance(by: 1)
        }
        #expect(slow.isWaitingForWritable, "a blocked client waits for the pipe to drain")
        let coalesced = daemon.onQueue { $0.counters.eventsCoalesced }
        #expect(coalesced >= 40, "\(coalesced) coalesced")
        // A request queued behind the backlog is answered, not coalesced away.
        daemon.send(#"{"id":99,"op":"status"}"#, from: slow)
        slow.capacity = 1 << 20
        var messages: [[String: Any]] = []
        for _ in 0..<10 { messages += daemon.receive(slow) }
        #expect(messages.contains { $0["id"] as? Int == 99 }, "the status reply arrived")
        let latitudes = messages.compactMap { ($0["new"] as? [String: Any])?["latitude"] as? Double }
        // The client only ever wanted the newest fix: few changes, the last one current.
        #expect(latitudes.count <= 3, "\(latitudes)")
        #expect(latitudes.last.map { abs($0 - 10.49) < 1e-9 } == true, "\(latitudes)")
        #expect(!slow.isWaitingForWritable, "a drained client costs nothing")
    }

    @Test func aReaderPastTheHardLimitIsDroppedAndTheOthersKeepTheirFixes() throws {
        var configuration = Configuration()
        configuration.socket.clientHardLimit = 4096
        let daemon = try EmbeddedDaemon(configuration: configuration)
        defer { daemon.stop() }
        daemon.emit(.connected(name: "manual://test"))
        let slow = daemon.connect(capacity: 128)
        let reader = daemon.connect()
        daemon.send(#"{"id":1,"op":"observe","keyPath":"rawLocation"}"#, from: reader)
        _ = daemon.receive(reader)
        // Replies are never coalesced: asking for status again and again
        // while never reading passes the limit.
        var sent = 0
        while !slow.isClosed, sent < 1000 {
            daemon.send(#"{"id":\#(sent),"op":"status"}"#, from: slow)
            sent += 1
        }
        #expect(slow.isClosed, "dropped after \(sent) unread replies")
        #expect(daemon.onQueue { $0.counters.clientsDropped } == 1)
        #expect(daemon.onQueue { $0.engine.snapshot.clients } == 1)
        daemon.fix(latitude: 5)
        daemon.advance(by: 1)
        daemon.fix(latitude: 6)
        daemon.advance(by: 1)
        let latitudes = daemon.receive(reader).compactMap { ($0["new"] as? [String: Any])?["latitude"] as? Double }
        #expect(latitudes.contains(5), "the reader keeps getting fixes")
    }
}
