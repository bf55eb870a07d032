import AklocTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `[mqtt] host` with several nodes against real DNS and a real mosquitto:
/// the first node's name is looked up at a DNS server that never answers (a
/// UDP socket on 127.9.9.9:53 that reads nothing, named by the daemon's own
/// /etc/resolv.conf in a mount namespace), the second is the broker. The
/// hung lookup must not stall the socket subscribers, and the connect
/// timeout moves the forwarder on to the second node.
@Suite(.serialized, .enabled(if: MQTTTest.shouldRun, "skipped: \(MQTTTest.missingMessage)"))
struct MQTTFailoverTests {
    let topic = "owntracks/tester/car"

    @Test func aHungDNSLookupStallsNoSubscriberAndTheNextNodeTakesOver() throws {
        guard LiveReplay.requireTools() else { return }
        guard getuid() == 0, TestProcess.which("unshare") != nil else {
            #expect(!GPSDTools.required, "needs root and unshare(1) for a private /etc/resolv.conf")
            return
        }
        // The silent DNS server: bound, so no ICMP refusal ends the lookup early. Close-on-exec: the
        // broker and subscriber started below must not inherit it (a run killed midway left them holding
        // 127.9.9.9:53, and the next run could not bind it).
        let dns = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(dns >= 0)
        defer { close(dns) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(53).bigEndian
        address.sin_addr.s_addr = inet_addr("127.9.9.9")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(dns, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0, "bind 127.9.9.9:53: \(String(cString: strerror(errno)))")
        let scratch = try ScratchDirectory()
        let resolv = scratch.path("resolv.conf")
        try "nameserver 127.9.9.9\noptions timeout:30 attempts:3\n".write(
            toFile: resolv, atomically: true, encoding: .utf8)

        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let subscriber = try MQTTSubscriber(port: broker.port)
        defer { subscriber.stop() }
        try subscriber.waitUntilSubscribed(port: broker.port)
        let fake = try GPSFake.start(log: LiveReplay.bundled("haicom-305N"), cycle: 0.2)
        defer { fake.stop() }
        var config = MQTTTest.config(port: broker.port, tid: "ca")
        config = config.replacingOccurrences(
            of: "host = 127.0.0.1\n", with: "host = never-answers.akloc-test, 127.0.0.1\n"
        ).replacingOccurrences(of: "keepalive = 5\n", with: "keepalive = 30\n")
        let daemon = try DaemonProcess(
            gpsdPort: fake.port, config: config, environment: ["AKLOC_RESOLV": resolv],
            launcher: [
                "unshare", "-m", "sh", "-c", "mount --bind \"$AKLOC_RESOLV\" /etc/resolv.conf && exec \"$0\" \"$@\"",
            ])
        defer { daemon.stop() }

        // While the forwarder waits for the lookup, a subscriber gets its fixes.
        let (client, _) = try daemon.connect()
        _ = try client.request("observe", ["keyPath": "rawLocation"])
        // The first fix (gpsfake's receiver needs a moment).
        _ = try client.waitFor(timeout: 30) { $0["keyPath"] as? String == "rawLocation" }
        var fixesWhileLookingUp = 0
        let lookupStarted = Date()
        while Date().timeIntervalSince(lookupStarted) < 6 {
            _ = try client.waitFor(timeout: 2) { $0["keyPath"] as? String == "rawLocation" }
            fixesWhileLookingUp += 1
        }
        let during = try MQTTTest.status(daemon)
        #expect(during["connected"] as? Bool == false, "still looking up the first node: \(during)")
        #expect(during["broker"] as? String == "mqtt://never-answers.akloc-test:\(broker.port)")
        #expect(fixesWhileLookingUp >= 5, "the replay's epochs reached the subscriber")
        // The lookup really went to the silent server.
        var query = [UInt8](repeating: 0, count: 512)
        #expect(recv(dns, &query, query.count, Int32(MSG_DONTWAIT)) > 12, "no DNS query reached 127.9.9.9")

        // The connect timeout (30 s with keepalive 30) moves on to node 2.
        let moved = try MQTTTest.waitForStatus(daemon, timeout: 45, "the second node") {
            $0["connected"] as? Bool == true
        }
        #expect(moved["broker"] as? String == "mqtt://127.0.0.1:\(broker.port)")
        #expect(moved["switches"] as? Int == 1)
        #expect(
            moved["nodes"] as? [String] == [
                "mqtt://never-answers.akloc-test:\(broker.port)", "mqtt://127.0.0.1:\(broker.port)",
            ])
        #expect(daemon.process.stderr().contains("no address for never-answers.akloc-test (name lookup) within 30 s"))
        let queued = try subscriber.waitFor(timeout: 20, "the fixes queued during the lookup") {
            MQTTTest.locations($0, topic: topic).count >= fixesWhileLookingUp
        }
        let accepted = MQTTTest.accepted(daemon.process.stderr())
        let received = MQTTTest.locations(queued, topic: topic)
        #expect(Array(accepted.prefix(received.count)) == received, "in order, none lost")
        print(
            "MQTT hung lookup: \(fixesWhileLookingUp) fixes to a socket subscriber in 6 s of lookup, "
                + "\(received.count) published via node 2")
    }
}
