import AklocTestSupport
import Foundation
import Testing

/// DESIGN §3: a slow reader never delays others. One client that never reads
/// while 50 others read a fast replay: the 50 get every epoch, the slow one's
/// location events are coalesced, and once its backlog of replies passes the
/// hard cap it is dropped, with the daemon's memory bounded throughout.
@Suite(.serialized, .enabled(if: GPSDTools.shouldRun, "skipped: \(GPSDTools.missingMessage)"))
struct SlowReaderTests {
    @Test func fiftyReadersKeepUpWhileOneSlowReaderIsCoalescedThenDropped() throws {
        guard LiveReplay.requireTools() else { return }
        // A boat trip, 5000 sentences at 2 ms: about 150 epochs in 10 s.
        let replay = try LiveReplay(log: "bundg_zeus_9", cycle: 0.002, config: "[socket]\nclient-hard-limit = 64K\n")
        let (admin, _) = try replay.daemon.connect()
        let memoryBefore = try #require(replay.daemon.residentKiB)

        // The slow client asks for five location streams and never reads.
        let (slow, _) = try replay.daemon.connect()
        for (op, arguments) in [
            ("observe", ["keyPath": "rawLocation"]), ("observe", ["keyPath": "rawLocation.coordinate"]),
            ("observe", ["keyPath": "myLocation", "policy": ["minInterval": 0]]),
            ("startUpdatingLocation", ["policy": ["minInterval": 0], "everyEpoch": true]),
        ] as [(String, [String: Any])] {
            try slow.send(op: op, arguments)
        }

        let readers = try (0..<50).map { _ in try replay.daemon.connect().0 }
        let epochs = ReaderResults(count: readers.count)
        let done = DispatchGroup()
        for (index, reader) in readers.enumerated() {
            done.enter()
            Thread {
                defer { done.leave() }
                do {
                    _ = try reader.request("observe", ["keyPath": "rawLocation"])
                    // Until gpsd goes away at the end of the replay.
                    _ = try reader.waitFor(timeout: 120) { message in
                        if message.event == "change", let new = message["new"] as? [String: Any],
                            let time = new["timestamp"] as? String
                        {
                            epochs.append(time, to: index)
                        }
                        return message.notification == "sourceDisconnected"
                    }
                } catch {
                    epochs.fail(index, "\(error)")
                }
            }.start()
        }
        #expect(done.wait(timeout: .now() + 150) == .success, "readers did not finish")

        let reference = epochs.lists[0]
        #expect(reference.count >= 100, "only \(reference.count) epochs reached a reader")
        #expect(Set(reference).count == reference.count, "an epoch was delivered twice")
        for index in 1..<readers.count {
            #expect(epochs.lists[index] == reference, "reader \(index) missed or reordered epochs")
        }
        #expect(epochs.failures.isEmpty, "\(epochs.failures)")

        var status = try #require(try admin.request("status").result as? [String: Any])
        var counters = try #require(status["counters"] as? [String: Any])
        #expect((counters["eventsCoalesced"] as? Int ?? 0) > 0, "the slow reader's locations were never coalesced")
        #expect(
            counters["clientsDropped"] as? Int == 0,
            "coalescing alone keeps a location-only slow reader; the daemon logged: \(Self.drops(replay.daemon))")

        // Now a backlog that cannot be coalesced: replies are never dropped, so
        // past the 64 KiB cap the daemon lets the client go.
        var sent = 0
        do {
            for _ in 0..<2000 {
                try slow.send(op: "get", ["keyPath": "state"])
                sent += 1
            }
        } catch {
            // EPIPE: the daemon dropped the client while it was still sending.
        }
        #expect(sent > 0)
        // What the slow client had buffered drains, then the daemon's close shows.
        var lines = 0
        while try slow.readLine(timeout: 10) != nil { lines += 1 }
        #expect(lines > 0)
        status = try #require(try admin.request("status").result as? [String: Any])
        counters = try #require(status["counters"] as? [String: Any])
        #expect(counters["clientsDropped"] as? Int == 1)
        #expect((status["clients"] as? [String: Any])?["connected"] as? Int == 51)
        #expect(replay.daemon.process.stderr().contains("slow reader"), "the drop is logged with its reason")
        let memoryAfter = try #require(replay.daemon.residentKiB)
        #expect(memoryAfter - memoryBefore < 32 * 1024, "RSS grew from \(memoryBefore) to \(memoryAfter) KiB")
        print("slow reader: 50 readers got \(reference.count) epochs each; RSS \(memoryBefore) -> \(memoryAfter) KiB")
    }
}

extension SlowReaderTests {
    /// The daemon's log lines about dropped clients, for failure messages.
    static func drops(_ daemon: DaemonProcess) -> String {
        daemon.process.stderr().split(separator: "\n").filter { $0.contains("dropping client") }.joined(separator: "\n")
    }
}

/// Per-reader results, written by reader threads and read after they finish.
final class ReaderResults: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [[String]]
    private var errors: [Int: String] = [:]

    init(count: Int) { storage = Array(repeating: [], count: count) }

    func append(_ epoch: String, to index: Int) {
        lock.withLock { storage[index].append(epoch) }
    }

    func fail(_ index: Int, _ error: String) {
        lock.withLock { errors[index] = error }
    }

    var lists: [[String]] { lock.withLock { storage } }
    var failures: [Int: String] { lock.withLock { errors } }
}
