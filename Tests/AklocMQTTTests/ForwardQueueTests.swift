import AklocCore
import Testing

@testable import AklocMQTT

private func at(_ seconds: Int64) -> FixTime { FixTime(secondsSince1970: 1_000_000 + seconds) }
private func payload(_ text: String) -> [UInt8] { Array(text.utf8) }

@Suite struct ForwardQueueTests {
    /// Publishes what the window allows, with message ids from `mid`.
    private func publishAll(_ queue: inout ForwardQueue, from mid: inout Int32) -> [UInt64] {
        var sent: [UInt64] = []
        while let entry = queue.nextToPublish() {
            queue.sent(entry.seq, messageID: mid)
            mid += 1
            sent.append(entry.seq)
        }
        return sent
    }

    @Test func publishesInOrderAndRemovesOnlyOnPuback() {
        var queue = ForwardQueue(window: 16)
        for index in 0..<3 { _ = queue.append(payload("p\(index)"), at: at(Int64(index))) }
        var mid: Int32 = 1
        #expect(publishAll(&queue, from: &mid) == [1, 2, 3])
        #expect(queue.count == 3)
        #expect(queue.acknowledged(messageID: 2) == 2)
        #expect(queue.entries.map(\.seq) == [1, 3])
        #expect(queue.acknowledged(messageID: 2) == nil)  // a duplicate PUBACK
        #expect(queue.acknowledged(messageID: 99) == nil)
        #expect(queue.acknowledged(messageID: 1) == 1)
        #expect(queue.acknowledged(messageID: 3) == 3)
        #expect(queue.count == 0)
        #expect(queue.bytes == 0)
        #expect(queue.nextToPublish() == nil)
    }

    @Test func windowBoundsWhatIsInFlight() {
        var queue = ForwardQueue(window: 2)
        for index in 0..<5 { _ = queue.append(payload("p\(index)"), at: at(0)) }
        var mid: Int32 = 1
        #expect(publishAll(&queue, from: &mid) == [1, 2])
        _ = queue.acknowledged(messageID: 1)
        #expect(publishAll(&queue, from: &mid) == [3])
        #expect(queue.inFlightCount == 2)
    }

    @Test func replayAfterReconnectStartsAtTheOldestUnacknowledged() {
        var queue = ForwardQueue(window: 16)
        for index in 0..<4 { _ = queue.append(payload("p\(index)"), at: at(0)) }
        var mid: Int32 = 1
        _ = publishAll(&queue, from: &mid)
        _ = queue.acknowledged(messageID: 1)
        _ = queue.acknowledged(messageID: 3)
        #expect(queue.connectionLost() == 2)
        // A late PUBACK from the old connection's ids means nothing now.
        #expect(queue.acknowledged(messageID: 2) == nil)
        #expect(publishAll(&queue, from: &mid) == [2, 4])
        _ = queue.append(payload("p4"), at: at(0))
        #expect(publishAll(&queue, from: &mid) == [5])
    }

    @Test func maxEntriesDropsTheOldest() {
        var queue = ForwardQueue(limits: .init(maxEntries: 3, maxBytes: 1 << 20, maxAge: 3600))
        var dropped: [UInt64] = []
        for index in 0..<5 {
            let change = queue.append(payload("p\(index)"), at: at(0))
            dropped += change.dropped.map(\.seq)
            #expect(change.dropped.allSatisfy { $0.reason == .maxEntries })
        }
        #expect(dropped == [1, 2])
        #expect(queue.entries.map(\.seq) == [3, 4, 5])
        #expect(queue.drops.maxEntries == 2)
        #expect(queue.drops.total == 2)
    }

    @Test func maxBytesDropsTheOldestButKeepsTheNewest() {
        var queue = ForwardQueue(limits: .init(maxEntries: 100, maxBytes: 10, maxAge: 3600))
        _ = queue.append(payload("aaaa"), at: at(0))
        _ = queue.append(payload("bbbb"), at: at(0))
        let change = queue.append(payload("cccc"), at: at(0))
        #expect(change.dropped.map(\.seq) == [1])
        #expect(queue.bytes == 8)
        let huge = queue.append(payload(String(repeating: "x", count: 50)), at: at(0))
        #expect(huge.dropped.map(\.seq) == [2, 3])
        #expect(queue.entries.map(\.seq) == [4])
        #expect(queue.drops.maxBytes == 3)
    }

    @Test func maxAgeExpiresOldEntries() {
        var queue = ForwardQueue(limits: .init(maxEntries: 100, maxBytes: 1 << 20, maxAge: 60))
        _ = queue.append(payload("old"), at: at(0))
        _ = queue.append(payload("mid"), at: at(50))
        #expect(queue.expire(at: at(60)).dropped.isEmpty)
        let change = queue.expire(at: at(61))
        #expect(change.dropped.map(\.seq) == [1])
        #expect(change.dropped.first?.reason == .maxAge)
        let appended = queue.append(payload("new"), at: at(200))
        #expect(appended.dropped.map(\.seq) == [2])
        #expect(queue.drops.maxAge == 2)
        #expect(queue.oldest?.seq == 3)
    }

    @Test func expireDropsOldEntriesCountedApartFromMaxAge() {
        var queue = ForwardQueue(limits: .init(maxEntries: 100, maxBytes: 1 << 20, maxAge: 60, expire: 10))
        _ = queue.append(payload("old"), at: at(0))
        _ = queue.append(payload("new"), at: at(5))
        #expect(queue.expire(at: at(10)).dropped.isEmpty)
        let change = queue.expire(at: at(11))
        #expect(change.dropped.map(\.seq) == [1])
        #expect(change.dropped.first?.reason == .expired)
        #expect(queue.drops.expired == 1 && queue.drops.maxAge == 0 && queue.drops.total == 1)

        // An `expire` longer than `maxAge` never comes: `maxAge` drops first.
        var longer = ForwardQueue(limits: .init(maxEntries: 100, maxBytes: 1 << 20, maxAge: 60, expire: 600))
        _ = longer.append(payload("old"), at: at(0))
        #expect(longer.expire(at: at(61)).dropped.first?.reason == .maxAge)
        #expect(longer.drops.maxAge == 1 && longer.drops.expired == 0)
    }

    @Test func droppingAnEntryInFlightIgnoresItsPuback() {
        var queue = ForwardQueue(limits: .init(maxEntries: 1, maxBytes: 1 << 20, maxAge: 3600))
        _ = queue.append(payload("a"), at: at(0))
        var mid: Int32 = 1
        _ = publishAll(&queue, from: &mid)
        _ = queue.append(payload("b"), at: at(0))
        #expect(queue.acknowledged(messageID: 1) == nil)
        #expect(queue.entries.map(\.seq) == [2])
        #expect(publishAll(&queue, from: &mid) == [2])
    }

    @Test func restoredEntriesKeepTheirOrderAndSeqs() {
        let entries = [
            ForwardQueue.Entry(seq: 9, queuedAt: at(1), payload: payload("b")),
            ForwardQueue.Entry(seq: 7, queuedAt: at(0), payload: payload("a")),
        ]
        var queue = ForwardQueue(restoring: entries, nextSeq: 3)
        #expect(queue.entries.map(\.seq) == [7, 9])
        #expect(queue.nextSeq == 10)
        #expect(queue.append(payload("c"), at: at(2)).added?.seq == 10)
        #expect(queue.bytes == 3)
    }

    @Test func longDrainsReclaimStorage() {
        var queue = ForwardQueue(window: 16)
        var mid: Int32 = 1
        var published: [UInt64] = []
        for index in 0..<5000 { _ = queue.append(payload("p\(index)"), at: at(0)) }
        while queue.count > 0 {
            let firstMid = mid
            published += publishAll(&queue, from: &mid)
            for id in firstMid..<mid { _ = queue.acknowledged(messageID: id) }
        }
        #expect(published == Array(1...5000))
        #expect(queue.oldest == nil)
    }
}
