import AklocPosix
import Testing

/// The slow-reader rules without sockets: coalescing, order, byte accounting.
@Suite struct OutboundQueueTests {
    /// Drains the queue into a "socket" that takes at most `limit` bytes per write.
    static func drain(_ queue: inout OutboundQueue, limit: Int = .max) -> [UInt8] {
        var out: [UInt8] = []
        while queue.writeNext({ bytes in
            let count = min(bytes.count, limit)
            out.append(contentsOf: bytes.prefix(count))
            return count
        }) {}
        return out
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func keepsOrderAndAccountsBytes() {
        var queue = OutboundQueue()
        queue.enqueue(Self.bytes("a\n"))
        queue.enqueue(Self.bytes("bb\n"))
        #expect(queue.queuedBytes == 5)
        #expect(Self.drain(&queue, limit: 1) == Self.bytes("a\nbb\n"))
        #expect(queue.isEmpty && queue.queuedBytes == 0)
    }

    @Test func newerLocationReplacesUnsentOneAndMovesBehindNotifications() {
        var queue = OutboundQueue()
        queue.enqueue(Self.bytes("fix1\n"), key: 7)
        queue.enqueue(Self.bytes("paused\n"))
        let replaced = queue.enqueue(Self.bytes("fix2\n"), key: 7)
        #expect(replaced)
        queue.enqueue(Self.bytes("other-stream\n"), key: 8)
        #expect(queue.coalesced == 1)
        #expect(queue.queuedBytes == Self.bytes("paused\nfix2\nother-stream\n").count)
        #expect(Self.drain(&queue) == Self.bytes("paused\nfix2\nother-stream\n"))
    }

    @Test func aPartlyWrittenLocationIsNeverReplaced() {
        var queue = OutboundQueue()
        queue.enqueue(Self.bytes("fix1\n"), key: 1)
        // Two bytes of it reach the socket; the rest must follow whole.
        _ = queue.writeNext { _ in 2 }
        let replaced = queue.enqueue(Self.bytes("fix2\n"), key: 1)
        #expect(!replaced)
        #expect(Self.drain(&queue) == Self.bytes("x1\nfix2\n"))
    }

    @Test func repliesAndNotificationsAreNeverDropped() {
        var queue = OutboundQueue()
        for index in 0..<3000 {
            queue.enqueue(Self.bytes("reply\(index)\n"))
            queue.enqueue(Self.bytes("fix\(index)\n"), key: 1)
        }
        let text = String(decoding: Self.drain(&queue, limit: 7), as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("reply") }.count == 3000)
        #expect(lines.filter { $0.hasPrefix("fix") } == ["fix2999"])
        #expect(queue.coalesced == 2999)
    }
}

/// The remainder queued by the daemon's direct-write fast path.
@Suite struct OutboundQueueRemainderTests {
    private func drain(_ queue: inout OutboundQueue) -> [UInt8] {
        var out: [UInt8] = []
        while queue.writeNext({ buffer in
            out += buffer
            return buffer.count
        }) {}
        return out
    }

    @Test func remainderIsWrittenFromWhereTheSocketStopped() {
        var queue = OutboundQueue()
        queue.enqueueRemainder(of: Array("hello\n".utf8), written: 2, key: 1)
        #expect(queue.queuedBytes == 4)
        #expect(drain(&queue) == Array("llo\n".utf8))
        #expect(queue.isEmpty && queue.queuedBytes == 0)
    }

    @Test func partlyWrittenRemainderIsNeverCoalescedAway() {
        var queue = OutboundQueue()
        queue.enqueueRemainder(of: Array("old\n".utf8), written: 1, key: 1)
        let replaced = queue.enqueue(Array("new\n".utf8), key: 1)
        #expect(!replaced)
        #expect(drain(&queue) == Array("ld\nnew\n".utf8))
    }
}
