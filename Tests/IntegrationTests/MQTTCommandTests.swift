import AklocTestSupport
import Foundation
import Testing

/// OwnTracks commands (issue 30) through a real mosquitto: each sent with
/// mosquitto_pub to `<topic>/cmd` as the booklet, OwnTracks Recorder users
/// and Home Assistant's `mqtt.publish` send them, each answer read back
/// with mosquitto_sub; each refusal logged and nothing else done.
@Suite(.serialized, .enabled(if: MQTTTest.shouldRun, "skipped: \(MQTTTest.missingMessage)"))
struct MQTTCommandTests {
    let topic = "owntracks/tester/car"

    /// `payload` on `<topic>/cmd`, as a client of the broker publishes it.
    func send(_ payload: String, port: UInt16, file: String? = nil) throws {
        try MQTTTest.publish(payload, file: file, topic: topic + "/cmd", port: port)
    }

    @Test func eachEnabledCommandIsAnsweredOnItsTopic() throws {
        guard LiveReplay.requireTools() else { return }
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let subscriber = try MQTTSubscriber(port: broker.port)
        defer { subscriber.stop() }
        try subscriber.waitUntilSubscribed(port: broker.port)
        // An hour between throttled fixes: after the first, any location is a command's answer.
        let replay = try LiveReplay(
            log: "haicom-305N", cycle: 0.1,
            config: MQTTTest.config(
                port: broker.port, tid: "ca", minInterval: 3600, maxInterval: 3600,
                extra: """
                    username = tester
                    password = s3cret-pw
                    commands = reportLocation, waypoints, dump, setWaypoints
                    places-owner = 4242
                    """))
        defer { replay.stop() }
        try subscriber.waitFor(timeout: 30, "the first location") { MQTTTest.locations($0, topic: topic).count == 1 }

        // reportLocation: a fresh fix now, past the throttle, t "r".
        try send(#"{"_type":"cmd","action":"reportLocation"}"#, port: broker.port)
        let reported = try subscriber.waitFor(timeout: 20, "the reported location") {
            MQTTTest.locations($0, topic: topic).count == 2
        }
        let answer = try #require(reported.last { $0.topic == topic && $0.json?["_type"] as? String == "location" })
        #expect(answer.json?["t"] as? String == "r")
        #expect(abs((answer.json?["lat"] as? Double ?? 0) + 27.21) < 0.01)

        // dump: the effective settings on <topic>/dump, without the password.
        try send(#"{"_type":"cmd", "action":"dump"}"#, port: broker.port)
        let dumped = try subscriber.waitFor(timeout: 20, "the dump") { $0.contains { $0.topic == topic + "/dump" } }
        let dump = try #require(dumped.first { $0.topic == topic + "/dump" })
        #expect(dump.json?["_type"] as? String == "configuration")
        #expect(dump.json?["pubTopicBase"] as? String == topic)
        #expect(dump.json?["port"] as? Int == Int(broker.port))
        #expect(dump.json?["username"] as? String == "tester")
        #expect(dump.json?["auth"] as? Bool == true)
        #expect(!dump.payload.contains("s3cret"))

        // setWaypoints, in the booklet's shape: saved for uid 4242, and the
        // new list goes out as waypoints.
        try send(
            #"{"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":["#
                + #"{"_type":"waypoint","desc":"Depot","lat":-27.2,"lon":153.05,"rad":150,"tst":1385997757}]}}"#,
            port: broker.port)
        let set = try subscriber.waitFor(timeout: 20, "the waypoints after setWaypoints") {
            $0.contains { $0.topic == topic + "/waypoints" && $0.payload.contains("Depot") }
        }
        let list = try #require(set.last { $0.topic == topic + "/waypoints" })
        #expect(
            list.payload
                == #"{"_type":"waypoints","waypoints":[{"_type":"waypoint","desc":"Depot","lat":-27.2,"lon":153.05,"rad":150,"tst":1385997757}]}"#
        )
        let (client, _) = try replay.daemon.connect()
        let places = try #require(client.request("places")["result"] as? [String: Any])
        let saved = try #require((places["places"] as? [[String: Any]])?.first { $0["name"] as? String == "Depot" })
        #expect(saved["owner"] as? Int == 4242)
        #expect(saved["shared"] as? Bool == true)

        // waypoints: the list again.
        let before = subscriber.messages().filter { $0.topic == topic + "/waypoints" }.count
        try send(#"{"_type":"cmd","action":"waypoints"}"#, port: broker.port)
        let again = try subscriber.waitFor(timeout: 20, "the waypoints again") {
            $0.filter { $0.topic == topic + "/waypoints" }.count > before
        }
        #expect(again.last { $0.topic == topic + "/waypoints" }?.payload == list.payload)
        print("MQTT commands: reportLocation, dump, setWaypoints, waypoints answered")
    }

    @Test func refusedCommandsAreLoggedOnceAndChangeNothing() throws {
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
        try MQTTTest.waitForStatus(daemon, timeout: 20, "a connection") { $0["connected"] as? Bool == true }

        let oversized = FileManager.default.temporaryDirectory.appendingPathComponent("akloc-cmd-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: oversized) }
        try (#"{"_type":"cmd","action":"dump","pad":""# + String(repeating: "x", count: 300_000) + #""}"#)
            .write(to: oversized, atomically: true, encoding: .utf8)
        let refusals: [(String, String?, String)] = [
            (#"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"X","lat":1,"lon":1}]}"#, nil, "notEnabled"),
            (#"{"_type":"cmd","action":"reportSteps"}"#, nil, "unknownAction"),
            (#"{"_type":"cmd","action":"#, nil, "malformed"),
            (#"{"_type":"location","lat":1,"lon":1,"tst":1}"#, nil, "notACommand"),
            ("", oversized.path, "tooLarge"),
        ]
        for (payload, file, _) in refusals {
            // Each twice: the second is counted, not logged.
            try send(payload, port: broker.port, file: file)
            try send(payload, port: broker.port, file: file)
        }
        // A command sent after them is carried out: the refusals were all read and ignored.
        try send(#"{"_type":"cmd","action":"dump"}"#, port: broker.port)
        try subscriber.waitFor(timeout: 20, "the dump") { $0.contains { $0.topic == topic + "/dump" } }
        let log = daemon.process.stderr()
        for (_, _, code) in refusals {
            let lines = log.split(separator: "\n").filter {
                $0.contains("ignored a command") && $0.contains("[\(code)]")
            }
            #expect(lines.count == 1, "\(code): \(lines)")
        }
        // The empty list published at the connection, never one with the refused place.
        #expect(!subscriber.messages().contains { $0.topic == topic + "/waypoints" && $0.payload.contains("\"X\"") })
        let (client, _) = try daemon.connect()
        let places = try #require(client.request("places")["result"] as? [String: Any])
        #expect((places["places"] as? [Any])?.isEmpty == true)
        #expect(daemon.process.isRunning)
    }
}
