/// The bytes waiting to be written to one stream (DESIGN §3, slow readers):
/// the bookkeeping of `BufferedStream`, pure, so its rules are unit-tested
/// without sockets:
/// - a message with a coalescing key replaces any unsent message with the
///   same key (a client only ever wants the newest fix of a stream), and
///   moves to the back, so it never overtakes what was queued before it;
/// - messages without a key (replies, notifications) are never dropped;
/// - `queuedBytes` lets the owner enforce a byte cap.
///
/// Entries hold `[UInt8]` arrays that are shared, copy-on-write, between every
/// stream a message was encoded for, so fan-out costs no copies.
public struct OutboundQueue {
    /// What a newer message replaces: one location stream of a client (its
    /// delegate updates, or one observed key path).
    public typealias CoalescingKey = Int

    private struct Entry {
        var bytes: [UInt8]
        var key: CoalescingKey?
    }

    private var entries: [Entry] = []
    private var head = 0
    /// Bytes of `entries[head]` already written.
    private var written = 0
    private var unsentByKey: [CoalescingKey: Int] = [:]
    public private(set) var queuedBytes = 0
    /// How many messages a newer one replaced.
    public private(set) var coalesced = 0

    public init() {}

    public var isEmpty: Bool { head == entries.count }

    /// Queues `bytes`; returns true when it replaced an unsent message with the same key.
    @discardableResult
    public mutating func enqueue(_ bytes: [UInt8], key: CoalescingKey? = nil) -> Bool {
        var replaced = false
        if let key, let index = unsentByKey[key], index > head || (index == head && written == 0) {
            queuedBytes -= entries[index].bytes.count
            entries[index] = Entry(bytes: [], key: nil)
            coalesced += 1
            replaced = true
        }
        if let key { unsentByKey[key] = entries.count }
        entries.append(Entry(bytes: bytes, key: key))
        queuedBytes += bytes.count
        return replaced
    }

    /// Queues what is left of `bytes` after the first `count` went straight
    /// to the socket (the fast path of an empty queue). A partly written
    /// message is never replaced by a newer one.
    public mutating func enqueueRemainder(of bytes: [UInt8], written count: Int, key: CoalescingKey? = nil) {
        precondition(isEmpty && count < bytes.count, "only an empty queue takes a remainder")
        enqueue(bytes, key: key)
        written = count
        queuedBytes -= count
    }

    /// Calls `body` with the unwritten part of the oldest message; `body`
    /// returns how many bytes it wrote. Returns false when the queue is empty.
    public mutating func writeNext(_ body: (UnsafeRawBufferPointer) -> Int) -> Bool {
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

    /// Forgets everything queued (the stream can no longer be written).
    public mutating func removeAll() {
        entries.removeAll()
        head = 0
        written = 0
        unsentByKey.removeAll()
        queuedBytes = 0
    }

    private mutating func skipEmpty() {
        while head < entries.count, entries[head].bytes.isEmpty { advance() }
    }

    private mutating func advance() {
        if let key = entries[head].key, unsentByKey[key] == head {
            unsentByKey[key] = nil
        }
        head += 1
        written = 0
        if head == entries.count {
            entries.removeAll(keepingCapacity: entries.count <= 64)
            head = 0
            unsentByKey.removeAll(keepingCapacity: true)
        } else if head >= 1024, head * 2 >= entries.count {
            // Compact now and then so a long-lived slow client costs O(queued), not O(ever sent).
            entries.removeFirst(head)
            unsentByKey = unsentByKey.mapValues { $0 - head }
            head = 0
        }
    }
}
