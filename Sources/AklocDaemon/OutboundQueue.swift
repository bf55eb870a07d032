/// The bytes waiting to be written to one client (DESIGN §3, slow readers).
///
/// Pure bookkeeping, no I/O, so the slow-reader rules are unit-testable:
/// - a location event replaces any unsent location event of the same stream
///   (the client only ever wants the newest fix), and moves to the back so it
///   never overtakes a notification that was queued before it;
/// - replies and notifications are never dropped;
/// - `queuedBytes` lets the owner enforce a hard cap.
///
/// Entries hold `[UInt8]` arrays that are shared, copy-on-write, between every
/// client an event was encoded for, so fan-out costs no copies.
struct OutboundQueue {
    /// A location stream of one client: its delegate updates, or one observed key path.
    typealias StreamKey = Int

    private struct Entry {
        var bytes: [UInt8]
        var stream: StreamKey?
    }

    private var entries: [Entry] = []
    private var head = 0
    /// Bytes of `entries[head]` already written.
    private var written = 0
    private var unsentByStream: [StreamKey: Int] = [:]
    private(set) var queuedBytes = 0
    private(set) var coalesced = 0

    var isEmpty: Bool { head == entries.count }

    /// Queues `bytes`; returns true when it replaced a stale location event.
    @discardableResult
    mutating func enqueue(_ bytes: [UInt8], stream: StreamKey? = nil) -> Bool {
        var replaced = false
        if let stream, let index = unsentByStream[stream], index > head || (index == head && written == 0) {
            queuedBytes -= entries[index].bytes.count
            entries[index] = Entry(bytes: [], stream: nil)
            coalesced += 1
            replaced = true
        }
        if let stream { unsentByStream[stream] = entries.count }
        entries.append(Entry(bytes: bytes, stream: stream))
        queuedBytes += bytes.count
        return replaced
    }

    /// Queues what is left of `bytes` after the first `count` went straight
    /// to the socket (the fast path of an empty queue). A partly written
    /// entry is never replaced by a newer location event.
    mutating func enqueueRemainder(of bytes: [UInt8], written count: Int, stream: StreamKey? = nil) {
        precondition(isEmpty && count < bytes.count, "only an empty queue takes a remainder")
        enqueue(bytes, stream: stream)
        written = count
        queuedBytes -= count
    }

    /// Calls `body` with the unwritten part of the oldest entry; `body` returns
    /// how many bytes it wrote. Returns false when the queue is empty.
    mutating func writeNext(_ body: (UnsafeRawBufferPointer) -> Int) -> Bool {
        skipEmpty()
        guard head < entries.count else { return false }
        let count = entries[head].bytes.withUnsafeBytes { buffer in
            body(UnsafeRawBufferPointer(rebasing: buffer[written...]))
        }
        guard count > 0 else { return true }
        written += count
        queuedBytes -= count
        if written == entries[head].bytes.count {
            advance()
        }
        return true
    }

    private mutating func skipEmpty() {
        while head < entries.count, entries[head].bytes.isEmpty { advance() }
    }

    private mutating func advance() {
        if let stream = entries[head].stream, unsentByStream[stream] == head {
            unsentByStream[stream] = nil
        }
        head += 1
        written = 0
        if head == entries.count {
            entries.removeAll(keepingCapacity: entries.count <= 64)
            head = 0
            unsentByStream.removeAll(keepingCapacity: true)
        } else if head >= 1024, head * 2 >= entries.count {
            // Compact now and then so a long-lived slow client costs O(queued), not O(ever sent).
            entries.removeFirst(head)
            unsentByStream = unsentByStream.mapValues { $0 - head }
            head = 0
        }
    }
}
