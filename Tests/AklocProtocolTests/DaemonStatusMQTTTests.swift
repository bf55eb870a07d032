import AklocCore
import AklocJSON
import Testing

@testable import AklocProtocol

@Suite struct DaemonStatusMQTTTests {
    let base = DaemonStatus(
        version: "0.1.0", state: .running, paused: false, uptimeSeconds: 10,
        source: .init(name: "gpsd://127.0.0.1:2947", connected: true), fix: nil, clients: .init(),
        counters: .init())

    @Test func theForwarderRoundTrips() throws {
        var status = base
        status.mqtt = DaemonStatus.MQTT(
            broker: "mqtts://broker:8883", topic: "owntracks/a/b", tid: "ab", connected: false, queued: 12,
            queuedBytes: 1800, oldestQueuedAgeSeconds: 61.5, published: 900, failed: 3, resent: 3,
            dropped: .init(maxEntries: 1, maxBytes: 0, maxAge: 2, expired: 3), lastError: "refused [connectionRefused]")
        var writer = JSONWriter()
        status.write(to: &writer)
        let json = try JSONValue.parse(writer.bytes).get()
        #expect(try DaemonStatus(json: json) == status)
        #expect(json["mqtt"]?["queued"] == .int(12))
        #expect(json["mqtt"]?["dropped"]?["expired"] == .int(3))
    }

    @Test func statusWithoutTheForwarderOmitsItAndOlderDaemonsDecode() throws {
        var writer = JSONWriter()
        base.write(to: &writer)
        #expect(!String(decoding: writer.bytes, as: UTF8.self).contains("mqtt"))
        let json = try JSONValue.parse(writer.bytes).get()
        #expect(try DaemonStatus(json: json).mqtt == nil)
    }

    @Test func anEmptyQueueHasNoOldestAge() throws {
        var status = base
        status.mqtt = DaemonStatus.MQTT(
            broker: "mqtt://h:1883", topic: "t", tid: "t", connected: true, queued: 0, queuedBytes: 0,
            oldestQueuedAgeSeconds: nil, published: 1, failed: 0, resent: 0, dropped: .init(), lastError: nil)
        var writer = JSONWriter()
        status.write(to: &writer)
        let text = String(decoding: writer.bytes, as: UTF8.self)
        #expect(!text.contains("oldestQueuedAgeSeconds"))
        #expect(!text.contains("lastError"))
    }
}
