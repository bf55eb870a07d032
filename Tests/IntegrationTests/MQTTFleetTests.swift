import AklocTestSupport
import Foundation
import Testing

/// Fleet scale (issue 8): 20 aklocd instances, each with its own tid, state
/// directory and socket, read one shared gpsd and publish to one broker; one
/// subscriber gets all 20 tracks, none missing.
@Suite(.serialized, .enabled(if: MQTTTest.shouldRun, "skipped: \(MQTTTest.missingMessage)"))
struct MQTTFleetTests {
    static let size = 20

    @Test func twentyDaemonsOneBrokerOneSubscriber() throws {
        guard LiveReplay.requireTools() else { return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let subscriber = try MQTTSubscriber(port: broker.port)
        defer { subscriber.stop() }
        try subscriber.waitUntilSubscribed(port: broker.port)
        // Slow enough that daemons started one after the other all see most of it.
        let fake = try GPSFake.start(log: LiveReplay.bundled("haicom-305N"), cycle: 0.03)
        defer { fake.stop() }
        var daemons: [DaemonProcess] = []
        defer { for daemon in daemons { daemon.stop() } }
        for index in 1...Self.size {
            // No tid configured: it defaults to the device's last two characters.
            let device = String(format: "unit%02d", index)
            let config = """
                [mqtt]
                enable = yes
                host = 127.0.0.1
                port = \(broker.port)
                user = fleet
                device = \(device)
                min-interval = 0
                max-interval = 0
                """
            daemons.append(try DaemonProcess(gpsdPort: fake.port, config: config))
        }
        _ = fake.waitForExit(timeout: 90)
        for daemon in daemons {
            try MQTTTest.waitForStatus(daemon, timeout: 30, "the queue to drain") {
                $0["queued"] as? Int == 0 && $0["connected"] as? Bool == true
            }
        }
        let accepted = daemons.map { MQTTTest.accepted($0.process.stderr()) }
        let topics = (1...Self.size).map { String(format: "owntracks/fleet/unit%02d", $0) }
        let messages = try subscriber.waitFor(timeout: 30, "every daemon's every fix") { messages in
            zip(topics, accepted).allSatisfy { topic, fixes in
                MQTTTest.withoutDuplicates(MQTTTest.locations(messages, topic: topic)).unique.count >= fixes.count
            }
        }
        var total = 0
        for (index, (topic, fixes)) in zip(topics, accepted).enumerated() {
            let (unique, _) = MQTTTest.withoutDuplicates(MQTTTest.locations(messages, topic: topic))
            #expect(unique == fixes, "\(topic): every accepted fix, in order")
            #expect(fixes.count >= 10, "\(topic) saw the replay")
            let tid = String(format: "%02d", index + 1)
            #expect(unique.allSatisfy { $0.contains("\"tid\":\"\(tid)\"") }, "\(topic) has tid \(tid)")
            total += unique.count
        }
        let tracks = Set(messages.compactMap { $0.json?["_type"] as? String == "location" ? $0.topic : nil })
        #expect(tracks.count == Self.size)
        print(
            "MQTT fleet: \(Self.size) daemons, \(tracks.count) tracks, \(total) fixes received, "
                + "per daemon \(accepted.map(\.count).min() ?? 0)-\(accepted.map(\.count).max() ?? 0)")
    }
}
