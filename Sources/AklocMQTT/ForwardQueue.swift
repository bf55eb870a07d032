import AklocCore

/// The store-and-forward queue's rules (docs/mqtt.md), with no I/O: which
/// fix goes out next, what a PUBACK removes, what the limits drop. The
/// forwarder mirrors every change into `QueueJournal` so the queue survives
/// a restart.
///
/// - Entries keep their order: they are published oldest first, and after a
///   reconnect the replay starts again at the oldest unacknowledged one.
/// - An entry leaves only when the broker acknowledges its message id (QoS 1
///   PUBACK), or when a limit drops it, counted by reason.
/// - At most `window` messages are in flight at once, so libmosquitto never
///   queues behind our back and the order on the wire is ours.
public struct ForwardQueue: Sendable {
    public struct Entry: Hashable, Sendable {
        /// Increasing for the life of the state directory; journal records name it.
        public var seq: UInt64
        /// Wall-clock time it was queued: ages must survive a restart, which
        /// the monotonic clock does not.
        public var queuedAt: FixTime
        public var payload: [UInt8]

        public init(seq: UInt64, queuedAt: FixTime, payload: [UInt8]) {
            self.seq = seq
            self.queuedAt = queuedAt
            self.payload = payload
        }
    }

    public struct Limits: Hashable, Sendable {
        /// About ten days of one fix every 10 s.
        public var maxEntries = 100_000
        /// Payload bytes held; OwnTracks locations are ~150 bytes.
        public var maxBytes = 32 << 20
        /// Seconds; a fix older than this is of no use to a live map.
        public var maxAge: Double = 7 * 86_400
        /// `[mqtt] expire`, seconds: the age at which the broker would drop
        /// a fix anyway (its MQTT 5 message expiry), so the queue drops it
        /// first, counted apart from `maxAge`. nil: no expiry.
        public var expire: Double?

        public init() {}

        public init(maxEntries: Int, maxBytes: Int, maxAge: Double, expire: Double? = nil) {
            self.maxEntries = maxEntries
            self.maxBytes = maxBytes
            self.maxAge = maxAge
            self.expire = expire
        }

        /// The age past which an entry leaves, and under which reason: the
        /// smaller of the two limits.
        var age: (seconds: Double, reason: DropReason) {
            guard let expire, expire <= maxAge else { return (maxAge, .maxAge) }
            return (expire, .expired)
        }
    }

    /// Why an entry was dropped unpublished; the raw value is the stable name
    /// logs and `akloc status` use.
    public enum DropReason: String, Hashable, Sendable, CaseIterable {
        case maxEntries
        case maxBytes
        case maxAge
        case expired
    }

    public struct Drops: Hashable, Sendable {
        public var maxEntries: UInt64 = 0
        public var maxBytes: UInt64 = 0
        public var maxAge: UInt64 = 0
        public var expired: UInt64 = 0

        public init() {}

        public var total: UInt64 { maxEntries + maxBytes + maxAge + expired }

        mutating func count(_ reason: DropReason) {
            switch reason {
            case .maxEntries: maxEntries += 1
            case .maxBytes: maxBytes += 1
            case .maxAge: maxAge += 1
            case .expired: expired += 1
            }
        }
    }

    public var limits: Limits
    public let window: Int
    public private(set) var drops = Drops()
    /// Live (unacknowledged, undropped) entries.
    public private(set) var count = 0
    /// Their payload bytes.
    public private(set) var bytes = 0
    public private(set) var nextSeq: UInt64

    /// `storage[head...]` holds the live entries in order, interleaved with
    /// removed ones (`removed`) until the head passes them; acknowledgements
    /// arrive near the head, so removal is O(1) amortised.
    private var storage: [Entry] = []
    private var removed: [Bool] = []
    private var head = 0
    /// Index of the next entry to publish on this connection.
    private var cursor = 0
    /// Message id -> seq of what is on the wire awaiting PUBACK.
    private var inFlight: [Int32: UInt64] = [:]

    public init(limits: Limits = Limits(), window: Int = 16, restoring entries: [Entry] = [], nextSeq: UInt64 = 1) {
        self.limits = limits
        self.window = max(1, window)
        self.nextSeq = max(nextSeq, (entries.map(\.seq).max() ?? 0) + 1)
        for entry in entries.sorted(by: { $0.seq < $1.seq }) {
            storage.append(entry)
            removed.append(false)
            count += 1
            bytes += entry.payload.count
        }
    }

    /// The oldest live entry.
    public var oldest: Entry? {
        var index = head
        while index < storage.count {
            if !removed[index] { return storage[index] }
            index += 1
        }
        return nil
    }

    /// Live entries, oldest first (for tests and compaction).
    public var entries: [Entry] {
        (head..<storage.count).compactMap { removed[$0] ? nil : storage[$0] }
    }

    public var inFlightCount: Int { inFlight.count }

    /// What `append` and `expire` did: the entry added, and those dropped with why.
    public struct Change: Hashable, Sendable {
        public var added: Entry?
        public var dropped: [(seq: UInt64, reason: DropReason)]

        public static func == (lhs: Change, rhs: Change) -> Bool {
            lhs.added == rhs.added && lhs.dropped.map(\.seq) == rhs.dropped.map(\.seq)
                && lhs.dropped.map(\.reason) == rhs.dropped.map(\.reason)
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(added)
            for drop in dropped {
                hasher.combine(drop.seq)
                hasher.combine(drop.reason)
            }
        }
    }

    /// Queues a payload, then applies the limits oldest first: age, then
    /// entry count, then bytes. A new fix is never the one refused: a live
    /// map wants the newest, and the oldest is the least useful.
    public mutating func append(_ payload: [UInt8], at now: FixTime) -> Change {
        let entry = Entry(seq: nextSeq, queuedAt: now, payload: payload)
        nextSeq += 1
        storage.append(entry)
        removed.append(false)
        count += 1
        bytes += payload.count
        var change = Change(added: entry, dropped: expire(at: now).dropped)
        while count > limits.maxEntries, let seq = dropOldest(.maxEntries) { change.dropped.append((seq, .maxEntries)) }
        while bytes > limits.maxBytes, count > 1, let seq = dropOldest(.maxBytes) {
            change.dropped.append((seq, .maxBytes))
        }
        return change
    }

    /// Drops entries queued more than `maxAge` (or `expire`, if smaller)
    /// seconds before `now`.
    public mutating func expire(at now: FixTime) -> Change {
        var change = Change(added: nil, dropped: [])
        let age = limits.age
        while let oldest, ForwardQueue.seconds(from: oldest.queuedAt, to: now) > age.seconds,
            let seq = dropOldest(age.reason)
        {
            change.dropped.append((seq, age.reason))
        }
        return change
    }

    /// The next entry to hand to the client, if the window has room; call
    /// `sent(_:messageID:)` once the client took it.
    public mutating func nextToPublish() -> Entry? {
        guard inFlight.count < window else { return nil }
        while cursor < storage.count, removed[cursor] { cursor += 1 }
        guard cursor < storage.count else { return nil }
        return storage[cursor]
    }

    /// The entry `nextToPublish` returned is on its way as `messageID`.
    public mutating func sent(_ seq: UInt64, messageID: Int32) {
        guard cursor < storage.count, storage[cursor].seq == seq else { return }
        inFlight[messageID] = seq
        cursor += 1
    }

    /// A PUBACK: removes that message's entry. Returns its seq, or nil for an
    /// id that is not in flight (a late PUBACK from a dropped entry).
    public mutating func acknowledged(messageID: Int32) -> UInt64? {
        guard let seq = inFlight.removeValue(forKey: messageID) else { return nil }
        guard let index = index(of: seq), !removed[index] else { return nil }
        remove(at: index)
        return seq
    }

    /// The connection is gone: whatever was in flight is unacknowledged and
    /// goes out again, in order, on the next connection. Returns how many
    /// messages were in flight (the forwarder counts them as failed).
    @discardableResult
    public mutating func connectionLost() -> Int {
        let lost = inFlight.count
        inFlight.removeAll()
        cursor = head
        return lost
    }

    // MARK: - Internals

    private mutating func dropOldest(_ reason: DropReason) -> UInt64? {
        var index = head
        while index < storage.count, removed[index] { index += 1 }
        guard index < storage.count else { return nil }
        let seq = storage[index].seq
        remove(at: index)
        drops.count(reason)
        return seq
    }

    private mutating func remove(at index: Int) {
        removed[index] = true
        count -= 1
        bytes -= storage[index].payload.count
        while head < storage.count, removed[head] { head += 1 }
        if cursor < head { cursor = head }
        // Reclaim the dead prefix once it dominates the storage.
        if head > 1024, head * 2 > storage.count {
            storage.removeFirst(head)
            removed.removeFirst(head)
            cursor -= head
            head = 0
        }
    }

    /// Binary search: `storage` is sorted by seq.
    private func index(of seq: UInt64) -> Int? {
        var low = head
        var high = storage.count
        while low < high {
            let middle = (low + high) / 2
            if storage[middle].seq < seq { low = middle + 1 } else { high = middle }
        }
        return low < storage.count && storage[low].seq == seq ? low : nil
    }

    static func seconds(from earlier: FixTime, to later: FixTime) -> Double {
        Double(later.secondsSince1970 - earlier.secondsSince1970)
            + Double(later.nanoseconds - earlier.nanoseconds) / 1e9
    }
}
