import AklocTestSupport
import Foundation
import Testing

/// MQTT 5 against mosquitto 2.0 (issue 30): the session outlives an aklocd
/// restart (a command sent meanwhile is carried out after it), and `expire`
/// drops fixes both from aklocd's queue (counted) and, as their message
/// expiry, from an offline consumer's queue at the broker.
@Suite(.serialized, .enabled(if: MQTTTest.shouldRun, "skipped: \(MQTTTest.missingMessage)"))
struct MQTT5Tests {
    let topic = "owntracks/tester/car"

    @Test func theSessionIsResumedAfterARestartWithWhatCameMeanwhile() throws {
        guard LiveReplay.requireTools() else { return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let subscriber = try MQTTSubscriber(port: broker.port)
        defer { subscriber.stop() }
        try subscriber.waitUntilSubscribed(port: broker.port)
        let daemon = try DaemonProcess(
            gpsdPort: FreePort.loopbackTCP(),
            config: MQTTTest.config(port: broker.port, tid: "ca", extra: "commands = dump"))
        defer { daemon.stop() }
        let first = try MQTTTest.waitForStatus(daemon, timeout: 20, "a connection") { $0["connected"] as? Bool == true }
        #expect(first["protocol"] as? String == "5", "protocol auto speaks 5 to mosquitto 2.0")
        #expect(first["sessionPresent"] as? Bool == false, "a fresh broker has no session yet")

        // A clean stop; a command arrives while aklocd is away.
        #expect(daemon.terminate() == 0)
        try MQTTTest.publish(#"{"_type":"cmd","action":"dump"}"#, topic: topic + "/cmd", port: broker.port)
        try daemon.restart()
        let again = try MQTTTest.waitForStatus(daemon, timeout: 20, "the reconnection") {
            $0["connected"] as? Bool == true
        }
        #expect(again["sessionPresent"] as? Bool == true, "the broker kept the session: \(again)")
        #expect(daemon.process.stderr().contains("(MQTT 5, session resumed)"))
        // The session kept the subscription and the command queued for it.
        let answered = try subscriber.waitFor(timeout: 20, "the dump sent while aklocd was stopped") {
            $0.contains { $0.topic == topic + "/dump" }
        }
        #expect(answered.first { $0.topic == topic + "/dump" }?.json?["_type"] as? String == "configuration")
        print("MQTT 5 session: resumed after a restart, the command sent meanwhile answered")
    }

    @Test func aPinnedThreeOneOneHasACleanSession() throws {
        guard LiveReplay.requireTools() else { return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let config = MQTTTest.config(port: broker.port, tid: "ca", extra: "protocol = 3.1.1\ncommands = dump")
        let daemon = try DaemonProcess(gpsdPort: FreePort.loopbackTCP(), config: config)
        defer { daemon.stop() }
        try MQTTTest.waitForStatus(daemon, timeout: 20, "a connection") { $0["connected"] as? Bool == true }
        #expect(daemon.terminate() == 0)
        try daemon.restart()
        let again = try MQTTTest.waitForStatus(daemon, timeout: 20, "the reconnection") {
            $0["connected"] as? Bool == true
        }
        #expect(again["protocol"] as? String == "3.1.1")
        #expect(again["sessionPresent"] as? Bool == false)
    }

    @Test func expiredFixesLeaveTheQueueCountedAndNeverArrive() throws {
        guard LiveReplay.requireTools() else { return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let subscriber = try MQTTSubscriber(port: broker.port)
        defer { subscriber.stop() }
        try subscriber.waitUntilSubscribed(port: broker.port)
        let replay = try LiveReplay(
            log: "haicom-305N", cycle: 0.04, config: MQTTTest.config(port: broker.port, tid: "ca", extra: "expire = 2s")
        )
        defer { replay.stop() }
        try subscriber.waitFor(timeout: 30, "the first 3 locations") { MQTTTest.locations($0, topic: topic).count >= 3 }
        broker.halt()
        // Each new fix ages the queue: those older than 2 s leave it.
        try MQTTTest.waitForStatus(replay.daemon, timeout: 60, "expired fixes dropped") {
            (($0["dropped"] as? [String: Any])?["expired"] as? Int ?? 0) >= 3
        }
        try broker.restart()
        _ = replay.fake.waitForExit(timeout: 60)
        try MQTTTest.waitForReplayEnd(replay.daemon)
        let mqtt = try MQTTTest.waitForStatus(replay.daemon, timeout: 30, "the rest to drain") {
            $0["queued"] as? Int == 0 && $0["connected"] as? Bool == true
        }
        let dropped = mqtt["dropped"] as? [String: Any] ?? [:]
        let expired = dropped["expired"] as? Int ?? 0
        #expect(dropped["maxAge"] as? Int == 0, "expiry is counted as expired, not under max-age")
        let accepted = MQTTTest.accepted(replay.daemon.process.stderr())
        let messages = try subscriber.waitFor(timeout: 30, "every fix that did not expire") {
            MQTTTest.withoutDuplicates(MQTTTest.locations($0, topic: topic)).unique.count + expired >= accepted.count
        }
        let (unique, _) = MQTTTest.withoutDuplicates(MQTTTest.locations(messages, topic: topic, retained: false))
        #expect(unique.count + expired == accepted.count, "each fix arrived or was counted as expired")
        #expect(unique.allSatisfy(accepted.contains))
        #expect(unique == accepted.filter(unique.contains), "in order")
        print(
            "MQTT 5 expire = 2s: \(accepted.count) accepted, \(unique.count) arrived, \(expired) expired in the queue")
    }

    @Test func theBrokerDropsExpiredFixesFromAnOfflineConsumersQueue() throws {
        guard LiveReplay.requireTools() else { return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        // A consumer with a persistent session, offline while aklocd publishes.
        let consumerID = "akloc-consumer-\(UUID().uuidString.prefix(8))"
        let away = try MQTTSubscriber(port: broker.port, clientID: consumerID)
        try away.waitUntilSubscribed(port: broker.port)
        away.stop()
        let replay = try LiveReplay(
            log: "haicom-305N", cycle: nil, config: MQTTTest.config(port: broker.port, tid: "ca", extra: "expire = 2s"))
        defer { replay.stop() }
        _ = replay.fake.waitForExit(timeout: 60)
        try MQTTTest.waitForReplayEnd(replay.daemon)
        let mqtt = try MQTTTest.waitForStatus(replay.daemon, timeout: 30, "every fix at the broker") {
            $0["queued"] as? Int == 0 && ($0["published"] as? Int ?? 0) > 50
        }
        let publishedAt = Date()
        // The interval under test has to pass: the broker drops them then.
        usleep(3_500_000)
        let back = try MQTTSubscriber(port: broker.port, clientID: consumerID)
        defer { back.stop() }
        // What did not expire still comes: the online status (no expiry).
        let messages = try back.waitFor(timeout: 20, "the queued status") {
            $0.contains { $0.topic == topic + "/akloc/status" }
        }
        try back.waitUntilSubscribed(port: broker.port)
        #expect(MQTTTest.locations(back.messages(), topic: topic).isEmpty, "expired fixes delivered: \(messages.count)")
        // The retained last position expired too.
        let late = try MQTTSubscriber.retained(port: broker.port, topic: topic)
        #expect(late.isEmpty)
        print(
            "MQTT 5 message expiry: \(mqtt["published"] ?? 0) fixes published with expire = 2s, none delivered to the "
                + "consumer back after \(String(format: "%.1f", Date().timeIntervalSince(publishedAt))) s")
    }
}
