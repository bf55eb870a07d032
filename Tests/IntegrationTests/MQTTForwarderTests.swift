import AklocTestSupport
import Foundation
import Testing

/// The MQTT forwarder against a real mosquitto and a real mosquitto_sub
/// (issue 8): OwnTracks JSON on the right topic at the forwarder's cadence,
/// nothing lost across a broker outage or a SIGKILL of aklocd.
@Suite(.serialized, .enabled(if: MQTTTest.shouldRun, "skipped: \(MQTTTest.missingMessage)"))
struct MQTTForwarderTests {
    let topic = "owntracks/tester/car"

    @Test func replayArrivesAsOwnTracksJSONOnTheTopic() throws {
        guard LiveReplay.requireTools() else { return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let subscriber = try MQTTSubscriber(port: broker.port)
        defer { subscriber.stop() }
        try subscriber.waitUntilSubscribed(port: broker.port)
        // min-interval = max-interval = 0: the forwarder takes every epoch.
        let replay = try LiveReplay(
            log: "haicom-305N", cycle: nil, config: MQTTTest.config(port: broker.port, tid: "ca"))
        defer { replay.stop() }
        _ = replay.fake.waitForExit(timeout: 60)
        try MQTTTest.waitForReplayEnd(replay.daemon)
        let mqtt = try MQTTTest.waitForStatus(replay.daemon, timeout: 20, "the queue to drain") {
            $0["queued"] as? Int == 0 && ($0["published"] as? Int ?? 0) > 0
        }
        let accepted = MQTTTest.accepted(replay.daemon.process.stderr())
        let messages = try subscriber.waitFor(timeout: 20, "\(accepted.count) locations") {
            MQTTTest.locations($0, topic: topic).count >= accepted.count
        }
        let received = MQTTTest.locations(messages, topic: topic)
        #expect(received == accepted)
        #expect(mqtt["published"] as? Int == accepted.count)
        #expect(mqtt["connected"] as? Bool == true)
        #expect(mqtt["topic"] as? String == topic)

        // Every epoch gpsd produced (the daemon's fix count) went out once.
        let (client, _) = try replay.daemon.connect()
        let status = try #require(try client.request("status")["result"] as? [String: Any])
        let fixes = try #require((status["counters"] as? [String: Any])?["fixesReceived"] as? Int)
        #expect(accepted.count == fixes)
        #expect(fixes > 50)

        var previous = 0
        for payload in received {
            let json = try #require(try JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any])
            #expect(json["_type"] as? String == "location")
            #expect(json["tid"] as? String == "ca")
            #expect(json["t"] as? String == "t")
            #expect(json["m"] as? Int == 1)
            let lat = try #require(json["lat"] as? Double)
            let lon = try #require(json["lon"] as? Double)
            #expect(abs(lat + 27.21) < 0.01 && abs(lon - 153.05) < 0.01)
            let tst = try #require(json["tst"] as? Int)
            #expect(tst >= previous)
            previous = tst
            for key in ["acc", "alt", "vel", "cog", "vac"] where json[key] != nil {
                #expect(json[key] is Int, "\(key) is an integer in OwnTracks: \(payload)")
            }
            #expect(!payload.contains("null"))
        }
        // `akloc status` shows the forwarder.
        let cli = try TestProcess(Binaries.akloc, ["--socket", replay.daemon.socketPath, "status"])
        #expect(cli.waitForExit(timeout: 20) == 0)
        let human = cli.stdout()
        #expect(
            human.contains(
                "mqtt:      mqtt://127.0.0.1:\(broker.port), connected, 0 queued, \(accepted.count) published"))
        #expect(human.contains("topic \(topic), tid ca, MQTT 5"))
        // The retained status says online.
        let statusMessage = try #require(messages.last { $0.topic == topic + "/akloc/status" })
        #expect(statusMessage.json?["online"] as? Bool == true)
        #expect(statusMessage.json?["_type"] as? String == "akloc-status")

        // A consumer that subscribes now, after the replay, gets the last
        // position at once: it is retained.
        let late = try MQTTSubscriber.retained(port: broker.port, topic: "owntracks/+/+")
        #expect(MQTTTest.locations(late, topic: topic) == [accepted.last].compactMap { $0 })

        // A clean stop says offline (retained) and leaves no will behind
        // (the will is that same offline status: it would come twice).
        #expect(replay.daemon.terminate() == 0)
        let after = try subscriber.waitFor(timeout: 10, "the offline status") {
            $0.last { $0.topic == topic + "/akloc/status" }?.json?["online"] as? Bool == false
        }
        usleep(500_000)
        #expect(
            subscriber.messages().filter { $0.topic == topic + "/akloc/status" && $0.json?["online"] as? Bool == false }
                .count == 1, "\(after)")
    }

    @Test func retainNoPublishesPositionsUnretained() throws {
        guard LiveReplay.requireTools() else { return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let replay = try LiveReplay(
            log: "haicom-305N", cycle: nil, config: MQTTTest.config(port: broker.port, tid: "ca", extra: "retain = no"))
        defer { replay.stop() }
        _ = replay.fake.waitForExit(timeout: 60)
        try MQTTTest.waitForReplayEnd(replay.daemon)
        try MQTTTest.waitForStatus(replay.daemon, timeout: 20, "the queue to drain") {
            $0["queued"] as? Int == 0 && ($0["published"] as? Int ?? 0) > 50
        }
        let late = try MQTTSubscriber.retained(port: broker.port, topic: "owntracks/#")
        #expect(MQTTTest.locations(late, topic: topic).isEmpty)
        // The status is retained whatever `retain` says: it is not a position.
        #expect(late.contains { $0.topic == topic + "/akloc/status" && $0.json?["online"] as? Bool == true })
    }

    @Test func qos0PublishesEveryFixAndEmptiesTheQueue() throws {
        guard LiveReplay.requireTools() else { return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let subscriber = try MQTTSubscriber(port: broker.port)
        defer { subscriber.stop() }
        try subscriber.waitUntilSubscribed(port: broker.port)
        let replay = try LiveReplay(
            log: "haicom-305N", cycle: nil, config: MQTTTest.config(port: broker.port, tid: "ca", extra: "qos = 0"))
        defer { replay.stop() }
        _ = replay.fake.waitForExit(timeout: 60)
        try MQTTTest.waitForReplayEnd(replay.daemon)
        let accepted = MQTTTest.accepted(replay.daemon.process.stderr())
        try MQTTTest.waitForStatus(replay.daemon, timeout: 20, "every fix written") {
            $0["queued"] as? Int == 0 && $0["published"] as? Int == accepted.count
        }
        let messages = try subscriber.waitFor(timeout: 20, "\(accepted.count) locations") {
            MQTTTest.locations($0, topic: topic).count >= accepted.count
        }
        #expect(MQTTTest.locations(messages, topic: topic) == accepted)
        #expect(accepted.count > 50)
    }

    @Test func aSIGKILLedDaemonLeavesItsLastWill() throws {
        guard LiveReplay.requireTools() else { return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let subscriber = try MQTTSubscriber(port: broker.port)
        defer { subscriber.stop() }
        try subscriber.waitUntilSubscribed(port: broker.port)
        let daemon = try DaemonProcess(
            gpsdPort: FreePort.loopbackTCP(), config: MQTTTest.config(port: broker.port, tid: "ca"))
        defer { daemon.stop() }
        try MQTTTest.waitForStatus(daemon, timeout: 20, "a connection") { $0["connected"] as? Bool == true }
        daemon.process.kill()
        // The will is the retained status, offline: the broker publishes it
        // when it loses the connection.
        let messages = try subscriber.waitFor(timeout: 20, "the will") {
            $0.contains { $0.topic == topic + "/akloc/status" && $0.json?["online"] as? Bool == false }
        }
        let will = try #require(messages.last { $0.topic == topic + "/akloc/status" })
        #expect(will.json?["_type"] as? String == "akloc-status")
        #expect((will.json?["tst"] as? Int ?? 0) > 1_700_000_000)
        // And it stays: a consumer that comes later reads offline at once.
        let late = try MQTTSubscriber.retained(port: broker.port, topic: topic + "/akloc/status")
        #expect(late.count == 1)
        #expect(late.first?.json?["online"] as? Bool == false)
    }

    @Test func theForwarderKeepsItsOwnCadence() throws {
        guard LiveReplay.requireTools() else { return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let subscriber = try MQTTSubscriber(port: broker.port)
        defer { subscriber.stop() }
        try subscriber.waitUntilSubscribed(port: broker.port)
        // An hour between fixes: the first fix goes out at once, then nothing
        // for the rest of the replay, whatever the socket clients get.
        let replay = try LiveReplay(
            log: "haicom-305N", cycle: nil,
            config: MQTTTest.config(port: broker.port, tid: "ca", minInterval: 3600, maxInterval: 3600))
        defer { replay.stop() }
        let (client, _) = try replay.daemon.connect()
        _ = try client.request("observe", ["keyPath": "rawLocation"])
        _ = replay.fake.waitForExit(timeout: 60)
        try MQTTTest.waitForReplayEnd(replay.daemon)
        _ = try client.waitFor(timeout: 30) { $0.notification == "sourceDisconnected" }
        let mqtt = try MQTTTest.waitForStatus(replay.daemon, timeout: 20, "one acknowledged fix") {
            $0["published"] as? Int == 1 && $0["queued"] as? Int == 0
        }
        #expect(mqtt["published"] as? Int == 1)
        let messages = try subscriber.waitFor(timeout: 10, "one location") {
            !MQTTTest.locations($0, topic: topic).isEmpty
        }
        #expect(MQTTTest.locations(messages, topic: topic).count == 1)
        #expect(MQTTTest.accepted(replay.daemon.process.stderr()).count == 1)
    }

    @Test func aBrokerOutageMidReplayLosesNothingAndKeepsOrder() throws {
        guard LiveReplay.requireTools() else { return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let subscriber = try MQTTSubscriber(port: broker.port)
        defer { subscriber.stop() }
        try subscriber.waitUntilSubscribed(port: broker.port)
        let replay = try LiveReplay(
            log: "haicom-305N", cycle: 0.04, config: MQTTTest.config(port: broker.port, tid: "ca"))
        defer { replay.stop() }
        try subscriber.waitFor(timeout: 30, "the first 5 locations") { MQTTTest.locations($0, topic: topic).count >= 5 }

        broker.halt()
        let down = try MQTTTest.waitForStatus(replay.daemon, timeout: 30, "10 fixes queued while the broker is down") {
            $0["connected"] as? Bool == false && ($0["queued"] as? Int ?? 0) >= 10
        }
        let queuedWhileDown = down["queued"] as? Int ?? 0
        #expect((down["oldestQueuedAgeSeconds"] as? Double ?? -1) >= 0)
        #expect(down["lastError"] is String)
        let restartedAt = Date()
        try broker.restart()
        try MQTTTest.waitForStatus(replay.daemon, timeout: 30, "the backlog to drain") {
            $0["connected"] as? Bool == true && $0["queued"] as? Int == 0
        }
        let drainSeconds = Date().timeIntervalSince(restartedAt)
        _ = replay.fake.waitForExit(timeout: 60)
        try MQTTTest.waitForReplayEnd(replay.daemon)
        let mqtt = try MQTTTest.waitForStatus(replay.daemon, timeout: 20, "the end of the replay to drain") {
            $0["queued"] as? Int == 0
        }
        let accepted = MQTTTest.accepted(replay.daemon.process.stderr())
        let messages = try subscriber.waitFor(timeout: 30, "every accepted fix") {
            MQTTTest.withoutDuplicates(MQTTTest.locations($0, topic: topic)).unique.count >= accepted.count
        }
        let (unique, duplicates) = MQTTTest.withoutDuplicates(
            MQTTTest.locations(messages, topic: topic, retained: false))
        #expect(unique == accepted, "every accepted fix, exactly in order")
        #expect(duplicates <= (mqtt["resent"] as? Int ?? 0), "duplicates only from resends")
        #expect(mqtt["published"] as? Int == accepted.count)
        print(
            "MQTT outage: \(accepted.count) accepted, \(unique.count) arrived, \(queuedWhileDown) queued while down, "
                + "\(duplicates) duplicates, resent \(mqtt["resent"] ?? 0), failed \(mqtt["failed"] ?? 0), "
                + "drained \(String(format: "%.2f", drainSeconds)) s after the broker restart")
    }

    @Test func queuedFixesSurviveSIGKILLWhileTheBrokerIsDown() throws {
        guard LiveReplay.requireTools() else { return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let subscriber = try MQTTSubscriber(port: broker.port)
        defer { subscriber.stop() }
        try subscriber.waitUntilSubscribed(port: broker.port)
        let replay = try LiveReplay(
            log: "haicom-305N", cycle: 0.04, config: MQTTTest.config(port: broker.port, tid: "ca"))
        defer { replay.stop() }
        try subscriber.waitFor(timeout: 30, "the first 3 locations") { MQTTTest.locations($0, topic: topic).count >= 3 }
        broker.halt()
        try MQTTTest.waitForStatus(replay.daemon, timeout: 30, "8 fixes queued") {
            ($0["queued"] as? Int ?? 0) >= 8
        }
        replay.daemon.process.kill()  // SIGKILL: no chance to flush anything
        let accepted = MQTTTest.accepted(replay.daemon.process.stderr())
        try broker.restart()
        try replay.daemon.restart()
        try MQTTTest.waitForStatus(replay.daemon, timeout: 30, "the restored queue to drain") {
            $0["connected"] as? Bool == true && $0["queued"] as? Int == 0
        }
        let messages = try subscriber.waitFor(timeout: 30, "every fix accepted before the kill") {
            MQTTTest.withoutDuplicates(MQTTTest.locations($0, topic: topic)).unique.count >= accepted.count
        }
        let (unique, duplicates) = MQTTTest.withoutDuplicates(MQTTTest.locations(messages, topic: topic))
        #expect(Array(unique.prefix(accepted.count)) == accepted, "every fix from before the kill, in order")
        #expect(replay.daemon.process.stderr().contains("queued fix(es) from the last run"))
        print(
            "MQTT SIGKILL: \(accepted.count) accepted before the kill, \(unique.count) arrived, \(duplicates) duplicates"
        )
    }
}
