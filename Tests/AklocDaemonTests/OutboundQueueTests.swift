import Testing

@testable import AklocDaemon

/// The remainder queued by the daemon's direct-write fast path.
@Suite struct OutboundQueueTests {
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
        queue.enqueueRemainder(of: Array("hello\n".utf8), written: 2, stream: 1)
        #expect(queue.queuedBytes == 4)
        #expect(drain(&queue) == Array("llo\n".utf8))
        #expect(queue.isEmpty && queue.queuedBytes == 0)
    }

    @Test func partlyWrittenRemainderIsNeverCoalescedAway() {
        var queue = OutboundQueue()
        queue.enqueueRemainder(of: Array("old\n".utf8), written: 1, stream: 1)
        let replaced = queue.enqueue(Array("new\n".utf8), stream: 1)
        #expect(!replaced)
        #expect(drain(&queue) == Array("ld\nnew\n".utf8))
    }
}
