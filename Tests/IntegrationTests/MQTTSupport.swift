import AklocTestSupport
import Foundation
import Testing

/// Shared pieces of the MQTT integration tests (issue 8): the aklocd config
/// for a broker, what the forwarder says it accepted, what the broker delivered.
enum MQTTTest {
    static var shouldRun: Bool { (GPSDTools.available && MosquittoBroker.available) || GPSDTools.required }
    static var missingMessage: String { "\(GPSDTools.missingMessage); \(MosquittoBroker.missingMessage)" }

    static func config(
        port: UInt16, tid: String, device: String = "car", minInterval: Double = 0, maxInterval: Double = 0,
        extra: String = ""
    ) -> String {
        """
        [mqtt]
        enable = yes
        host = 127.0.0.1
        port = \(port)
        user = tester
        device = \(device)
        tid = \(tid)
        client-id = akloc-test-\(device)
        min-interval = \(minInterval)
        max-interval = \(maxInterval)
        keepalive = 5
        \(extra)
        """
    }

    /// Publishes `payload` (or the file's bytes) QoS 1 with mosquitto_pub, as
    /// a backend sends a command.
    static func publish(_ payload: String, file: String? = nil, topic: String, port: UInt16) throws {
        let arguments = ["-h", "127.0.0.1", "-p", String(port), "-q", "1", "-t", topic]
        let publisher = try TestProcess(
            "mosquitto_pub", arguments + (file.map { ["-f", $0] } ?? ["-m", payload]))
        #expect(publisher.waitForExit(timeout: 10) == 0, "mosquitto_pub: \(publisher.stderr())")
    }

    /// The payloads the forwarder queued, in order, from its debug log
    /// (`MQTT queued #N {…}`), across every run whose stderr is given.
    static func accepted(_ stderr: String) -> [String] {
        stderr.split(separator: "\n").compactMap { line in
            guard line.contains("MQTT queued #"), let open = line.firstIndex(of: "{"),
                let close = line.lastIndex(of: "}")
            else { return nil }
            return String(line[open...close])
        }
    }

    /// Location payloads on `topic`, in arrival order; with `retained`
    /// false, only those delivered live (a subscriber that reconnects gets
    /// the retained last position again, which is no resend of aklocd's).
    static func locations(
        _ messages: [MQTTSubscriber.Message], topic: String, retained: Bool = true
    ) -> [String] {
        messages.filter {
            $0.topic == topic && (retained || !$0.retained) && $0.json?["_type"] as? String == "location"
        }.map(\.payload)
    }

    /// `received` with repeats of an already-seen payload removed (QoS 1
    /// redelivery), and how many there were.
    static func withoutDuplicates(_ received: [String]) -> (unique: [String], duplicates: Int) {
        var seen: Set<String> = []
        var unique: [String] = []
        for payload in received where seen.insert(payload).inserted { unique.append(payload) }
        return (unique, received.count - unique.count)
    }

    /// The `mqtt` object of aklocd's status.
    static func status(_ daemon: DaemonProcess) throws -> [String: Any] {
        let (client, _) = try daemon.connect()
        let reply = try client.request("status")
        let result = try #require(reply["result"] as? [String: Any])
        return try #require(result["mqtt"] as? [String: Any], "status has no mqtt object: \(result)")
    }

    /// After the replay's gpsd has gone: waits (bounded) until aklocd has
    /// seen it go. The epoch still open then is closed by the source loss
    /// (docs/semantics.md, "Epochs"), so every fix of the replay has been
    /// accepted by the forwarder and is in the log.
    static func waitForReplayEnd(_ daemon: DaemonProcess, timeout: Double = 20) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let (client, _) = try daemon.connect()
            let result = try #require(try client.request("status")["result"] as? [String: Any])
            if (result["source"] as? [String: Any])?["connected"] as? Bool == false { return }
            guard Date() < deadline else {
                throw SocketClient.Failure("aklocd still reports gpsd connected after \(timeout) s: \(result)")
            }
            usleep(50_000)
        }
    }

    /// Polls aklocd's status until `done` holds, bounded.
    @discardableResult
    static func waitForStatus(
        _ daemon: DaemonProcess, timeout: Double, _ what: String, _ done: ([String: Any]) -> Bool
    ) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let mqtt = try status(daemon)
            if done(mqtt) { return mqtt }
            guard Date() < deadline else {
                throw SocketClient.Failure("timed out after \(timeout) s waiting for \(what); status: \(mqtt)")
            }
            usleep(50_000)
        }
    }
}
