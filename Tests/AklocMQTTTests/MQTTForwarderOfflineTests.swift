import AklocCore
import AklocTestSupport
import Dispatch
import Foundation
import Testing

@testable import AklocMQTT

/// The forwarder with no broker to reach: fixes are queued durably, limits
/// drop the oldest with counts, and a new forwarder on the same state
/// directory finds what the last one queued.
@Suite struct MQTTForwarderOfflineTests {
    final class Box: @unchecked Sendable {
        var forwarder: MQTTForwarder?
        var logs: [String] = []
    }

    func settings(port: UInt16) -> MQTTSettings {
        var settings = MQTTSettings()
        settings.enabled = true
        settings.hosts = [HostPort(host: "127.0.0.1")]
        settings.port = port
        settings.limits = ForwardQueue.Limits(maxEntries: 3, maxBytes: 1 << 20, maxAge: 3600)
        return settings
    }

    @Test func queuesDurablyAndDropsTheOldestPastTheLimit() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-forwarder-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Nothing listens there: every connection attempt is refused.
        let settings = settings(port: FreePort.loopbackTCP())
        let identity = settings.identity(hostUser: "tester", hostName: "car")
        let queue = DispatchQueue(label: "test.forwarder")
        let box = Box()
        let clock = FixTime(secondsSince1970: 1_800_000_000)
        let manual = ManualClock()
        func make() -> MQTTForwarder {
            MQTTForwarder(
                settings: settings, identity: identity, stateDirectory: directory, queue: queue, version: "test",
                log: { _, message in box.logs.append(message) }, clock: manual)
        }
        let status: MQTTForwarder.Status = queue.sync {
            let forwarder = make()
            box.forwarder = forwarder
            forwarder.start()
            for index in 0..<5 {
                forwarder.accept(Location(latitude: Double(index), longitude: 1, timestamp: clock))
            }
            return forwarder.status
        }
        #expect(status.queued == 3)
        #expect(status.dropped.maxEntries == 2)
        #expect(status.connected == false)
        #expect(status.published == 0)
        #expect(status.oldestQueuedAgeSeconds == 0)
        #expect(box.logs.contains { $0.contains("dropped 1 unpublished fix(es), oldest first (maxEntries limit)") })

        // A new forwarder (a restarted daemon) finds the three newest, in order.
        let restored: [ForwardQueue.Entry] = queue.sync {
            box.forwarder?.stop()
            box.forwarder = nil
            return (try? QueueJournal(directory: directory).open().entries) ?? []
        }
        let latitudes = restored.map { String(decoding: $0.payload, as: UTF8.self) }.map { payload in
            payload.contains("\"lat\":2,")
                ? 2 : payload.contains("\"lat\":3,") ? 3 : payload.contains("\"lat\":4,") ? 4 : -1
        }
        #expect(latitudes == [2, 3, 4])
        let again: Int = queue.sync {
            let forwarder = make()
            box.forwarder = forwarder
            forwarder.start()
            defer { forwarder.stop() }
            return forwarder.status.queued
        }
        #expect(again == 3)
        #expect(box.logs.contains { $0.contains("3 queued fix(es) from the last run") })
    }
}
