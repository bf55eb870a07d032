import AklocCore
import AklocGPSD
import AklocPosix
import AklocTestSupport
import Foundation
import Testing

@testable import AklocDaemon
@testable import AklocMQTT

/// A broker the test scripts: it takes or refuses connections, records what
/// is published and when (on the virtual clock), and acknowledges on demand.
final class ScriptedBroker: MQTTConnection, @unchecked Sendable {
    var onEvent: ((MosquittoClient.Event) -> Void)?
    private(set) var isConnected = false
    var refusing = false
    private(set) var attempts: [Instant] = []
    private(set) var published: [(id: Int32, at: Instant, message: MosquittoClient.Message)] = []
    private var unacknowledged: [Int32] = []
    private var nextID: Int32 = 1
    let clock: ManualClock

    init(clock: ManualClock) {
        self.clock = clock
    }

    func connect() throws(MQTTError) {
        attempts.append(clock.now())
        if refusing { throw MQTTError(.connectFailed, "connection refused (scripted)") }
    }

    func publish(_ message: MosquittoClient.Message) throws(MQTTError) -> Int32 {
        defer { nextID += 1 }
        published.append((nextID, clock.now(), message))
        unacknowledged.append(nextID)
        return nextID
    }

    func disconnect() { isConnected = false }

    /// CONNACK.
    func accept() {
        isConnected = true
        onEvent?(.connected(sessionPresent: false))
    }

    /// PUBACK for everything in flight.
    func acknowledgeAll() {
        let ids = unacknowledged
        unacknowledged.removeAll()
        for id in ids { onEvent?(.published(messageID: id)) }
    }

    /// The connection drops.
    func cut() {
        isConnected = false
        unacknowledged.removeAll()
        onEvent?(.disconnected(MQTTError(.connectFailed, "connection lost (scripted)")))
    }

    /// Latitudes of the location messages published on `topic`, in order, with their times.
    func locations(on topic: String) -> [(at: Instant, latitude: Double)] {
        published.compactMap { entry in
            guard entry.message.topic == topic,
                let json = try? JSONSerialization.jsonObject(with: Data(entry.message.payload)) as? [String: Any],
                json["_type"] as? String == "location", let latitude = json["lat"] as? Double
            else { return nil }
            return (entry.at, latitude)
        }
    }
}

/// The MQTT forwarder inside the whole daemon, on virtual time, without a
/// broker: its own throttled share of fixes, its queue and its limits while
/// the broker is away, the shared reconnect back-off, and the drain after.
@Suite struct EmbeddedForwarderTests {
    final class Made: @unchecked Sendable {
        var broker: ScriptedBroker?
        var forwarder: MQTTForwarder?
    }

    @Test func forwarderQueuesWhileTheBrokerIsAwayAndDrainsInOrderAfterTheBackoff() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-embedded-mqtt-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        var configuration = Configuration()
        configuration.mqtt.enabled = true
        configuration.mqtt.hosts = [HostPort(host: "broker.test")]
        configuration.mqtt.topic = "owntracks/embedded/car"
        configuration.mqtt.policy = try ThrottlePolicy(minInterval: 5, maxInterval: 300)
        configuration.mqtt.limits = ForwardQueue.Limits(maxEntries: 4, maxBytes: 1 << 20, maxAge: 86_400)
        let made = Made()
        let path = directory.path
        let daemon = try EmbeddedDaemon(configuration: configuration) { settings, identity, queue, clock in
            let broker = ScriptedBroker(clock: clock)
            let forwarder = MQTTForwarder(
                settings: settings, identity: identity, stateDirectory: path, queue: queue, version: "test",
                log: { _, _ in }, clock: clock, random: { 0 })
            forwarder.makeConnection = { _, _, _ in broker }
            made.broker = broker
            made.forwarder = forwarder
            return forwarder
        }
        defer { daemon.stop() }
        let broker = try #require(made.broker)
        let topic = "owntracks/embedded/car"
        #expect(broker.attempts.count == 1, "the forwarder connects at start")
        daemon.onQueue { _ in broker.accept() }
        daemon.emit(.connected(name: "manual://test"))

        var latitude = 30.0
        func walk(_ seconds: Int, acknowledging: Bool) {
            for _ in 0..<seconds {
                latitude += 1e-5
                daemon.fix(latitude: latitude, speed: 1)
                daemon.advance(by: 1)
                if acknowledging { daemon.onQueue { _ in broker.acknowledgeAll() } }
            }
        }

        // Connected: the forwarder's own policy (every 5 s when moving).
        walk(21, acknowledging: true)
        let online = broker.locations(on: topic)
        #expect(online.count >= 4 && online.count <= 5, "\(online)")
        // The first epoch waits for the next one while the device's epoch
        // shape is learned (docs/semantics.md); from then on, every 5 s.
        let steady = online.dropFirst()
        #expect(
            zip(steady.dropFirst(), steady).allSatisfy { abs($0.at.seconds(since: $1.at) - 5) < 1e-6 },
            "\(online.map { $0.at.seconds })")
        #expect(daemon.onQueue { $0.features.feature(MQTTFeature.self)?.forwarder.status.queued } == 0)
        // The forwarder is an engine subscriber, not a client.
        let client = daemon.connect()
        _ = daemon.receive(client)
        daemon.send(#"{"id":1,"op":"status"}"#, from: client)
        let status = daemon.receive(client).first { $0["id"] as? Int == 1 }?["result"] as? [String: Any]
        #expect((status?["clients"] as? [String: Any])?["connected"] as? Int == 1)
        #expect((status?["mqtt"] as? [String: Any])?["published"] as? Int == online.count)

        // The broker goes away and refuses for a while: fixes queue, the
        // oldest past the limit are dropped, attempts back off.
        broker.refusing = true
        daemon.onQueue { _ in broker.cut() }
        walk(60, acknowledging: false)
        let queued = try #require(daemon.onQueue { $0.features.feature(MQTTFeature.self)?.forwarder.status })
        #expect(!queued.connected)
        #expect(queued.queued == 4)
        #expect(queued.dropped.maxEntries >= 7, "\(queued.dropped)")
        let gaps = zip(broker.attempts.dropFirst(), broker.attempts).map { $0.seconds(since: $1) }.dropFirst()
        // 0.5 s doubling (no jitter here), capped at 30 s; the first retry was 0.5 s after the cut.
        #expect(gaps.count >= 5, "\(broker.attempts)")
        #expect(Array(gaps.prefix(6)) == [1, 2, 4, 8, 16, 30].prefix(gaps.count).map { $0 }, "\(gaps)")
        let before = broker.locations(on: topic).count

        // Back: the next attempt connects and the queue drains oldest first.
        broker.refusing = false
        let attempts = broker.attempts.count
        daemon.advance(by: 31)
        #expect(broker.attempts.count == attempts + 1)
        daemon.onQueue { _ in broker.accept() }
        let drained = broker.locations(on: topic).dropFirst(before).map(\.latitude)
        #expect(drained.count == 4)
        #expect(drained == drained.sorted())
        daemon.onQueue { _ in broker.acknowledgeAll() }
        let after = try #require(daemon.onQueue { $0.features.feature(MQTTFeature.self)?.forwarder.status })
        #expect(after.connected && after.queued == 0)
    }
}
