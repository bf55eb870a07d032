import AklocCore
import AklocMQTT
import AklocPosix
import AklocSystemd
import AklocTestSupport
import Foundation
import Testing

@testable import AklocDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// DESIGN §8: a journal write must never delay the socket deliveries of the
/// same epoch. At the moment the daemon hands a fix to the MQTT forwarder
/// (which appends it to its journal and fsyncs), the subscriber's socket must
/// already hold that fix, and the journal must not hold it yet.
@Suite struct ForwardOrderTests {
    @Test func theJournalIsWrittenAfterTheSameEpochsSocketWrites() throws {
        var configuration = Configuration()
        configuration.mqtt.enabled = true
        configuration.mqtt.hosts = [HostPort(host: "127.0.0.1")]
        configuration.mqtt.port = FreePort.loopbackTCP()  // no broker: fixes stay journaled
        let daemon = try InProcessDaemon(
            gpsdPort: FreePort.loopbackTCP(), configuration: configuration, sessions: FakeSessionMonitor(),
            withState: true)
        defer { daemon.stop() }
        let client = try SocketClient.connect(path: daemon.socketPath)
        _ = try client.readMessage()
        let started = try client.request("startUpdatingLocation")
        #expect(started["ok"] as? Bool == true)
        let journal = daemon.directory.appendingPathComponent("state").path

        struct Seen: Sendable {
            var socketHeldTheFix = false
            var journalBytesBefore = -1
        }
        let fix = Location(latitude: 52.123456, longitude: 5.654321, speed: 0.5, course: 10)
        let seen: Seen = daemon.daemon.queue.sync {
            daemon.daemon.assumeIsolated { shell in
                var seen = Seen()
                let forwarding = shell.features.feature(MQTTFeature.self)
                forwarding?.willForward = { location in
                    guard location.latitude == fix.latitude else { return }
                    var buffer = [UInt8](repeating: 0, count: 65_536)
                    let count = recv(client.fd, &buffer, buffer.count, Int32(MSG_PEEK | MSG_DONTWAIT))
                    let pending = count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
                    seen.socketHeldTheFix = pending.contains("didUpdateLocation") && pending.contains("52.123456")
                    seen.journalBytesBefore = Self.journalBytes(in: journal)
                }
                // A fix without a time is an epoch of its own: delivered at once.
                shell.run(.fix(fix))
                forwarding?.willForward = nil
                return seen
            }
        }
        #expect(seen.socketHeldTheFix, "the forwarder got the fix before the subscriber's socket did")
        let after = Self.journalBytes(in: journal)
        #expect(after > max(0, seen.journalBytesBefore), "the fix was journaled after the hook (\(after) bytes)")
        let update = try client.waitFor { $0["event"] as? String == "didUpdateLocation" }
        #expect((update["location"] as? [String: Any])?["latitude"] as? Double == fix.latitude)
    }

    /// Bytes in the forwarder's journal files, 0 when there are none yet.
    static func journalBytes(in directory: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.contains("mqtt") }.reduce(0) { total, name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            return total + ((attributes?[.size] as? Int) ?? 0)
        }
    }
}
