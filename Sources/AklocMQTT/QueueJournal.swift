import AklocCore
import AklocJSON
import AklocPosix

/// The store-and-forward queue on disk: a `Journal` (checksummed records, one
/// a line) in the state directory, `mqtt-queue.journal`. Each record is
/// one JSON object:
///
///     {"next":42}                                                   first record after a compaction
///     {"seq":42,"queuedAt":1764517000,"queuedAtNs":12000000,"payload":"{\"_type\":\"location\",…}"}
///     {"ack":42}                                                    the broker took it (PUBACK)
///     {"drop":43,"reason":"maxAge"}                                 a limit dropped it
///
/// An entry is appended and fsynced before it is published, so a fix the
/// forwarder accepted survives SIGKILL and power loss. Ack and drop records
/// are written without fsync: losing one means the entry is published again
/// after a crash, a duplicate QoS 1 allows anyway, and it saves a disk flush
/// per message. A torn or corrupt record is skipped with a warning. The
/// file is rewritten (atomically) with only the live entries at start-up
/// and whenever dead records outnumber live ones.
///
/// A queue left by an older aklocd (`mqtt-queue.ndjson`, the same objects
/// without checksums) is read once and carried over.
///
/// Not thread-safe: the forwarder owns it on the daemon's queue.
public final class QueueJournal {
    public static let fileName = "mqtt-queue.journal"
    /// What aklocd 0.x wrote before the journal had checksums.
    public static let legacyFileName = "mqtt-queue.ndjson"
    /// A bigger journal is not ours to load in one piece (the byte limit
    /// caps the live queue far below this).
    public static let maximumFileSize = 1 << 30
    /// Compaction waits for this many dead records, so a quiet queue is not
    /// rewritten on every acknowledgement.
    public static let compactionThreshold = 512

    public let path: String
    private let legacyPath: String
    private let journal: Journal
    /// Records in the file that no longer stand for a live entry.
    public private(set) var deadRecords = 0

    public struct Loaded: Sendable {
        public var entries: [ForwardQueue.Entry]
        public var nextSeq: UInt64
        /// Torn or unreadable records that were skipped, in words.
        public var warnings: [String]
    }

    public init(directory: String) {
        path = directory + "/" + Self.fileName
        legacyPath = directory + "/" + Self.legacyFileName
        journal = Journal(path: path, mode: 0o600)
    }

    /// Reads the journal (a missing one is empty), compacts it to the live
    /// entries, and opens it for appending.
    public func open() throws(MQTTError) -> Loaded {
        var records: [[UInt8]] = []
        var warnings: [String] = []
        let legacy: [UInt8]?
        do {
            legacy = try FileReader.read(legacyPath, limit: Self.maximumFileSize)
        } catch  where error == .noSuchFile {
            legacy = nil
        } catch {
            throw MQTTError(.journalUnreadable, "cannot read \(legacyPath): \(error)")
        }
        if let legacy {
            var lines = legacy.split(separator: 0x0A, omittingEmptySubsequences: false)
            if let tail = lines.popLast(), !tail.isEmpty { warnings.append(Self.tornWarning(tail.count)) }
            records += lines.filter { !$0.isEmpty }.map { Array($0) }
        }
        do {
            let contents = try journal.open(limit: Self.maximumFileSize)
            records += contents.records
            if contents.tornBytes > 0 { warnings.append(Self.tornWarning(contents.tornBytes)) }
            if contents.corruptRecords > 0 {
                warnings.append("skipped \(contents.corruptRecords) record(s) with a bad checksum")
            }
        } catch {
            throw MQTTError(.journalUnreadable, "cannot open \(path): \(error)")
        }
        var loaded = Self.parse(records)
        loaded.warnings = warnings + loaded.warnings
        try compact(loaded.entries, nextSeq: loaded.nextSeq)
        if legacy != nil {
            do {
                try FileSystem.remove(legacyPath)
            } catch {
                throw MQTTError(.journalWriteFailed, "cannot remove \(legacyPath): \(error)")
            }
        }
        return loaded
    }

    /// Appends an entry and waits for it to reach the disk.
    public func append(_ entry: ForwardQueue.Entry) throws(MQTTError) {
        do {
            try journal.append(Self.record(entry))
            try journal.sync()
        } catch {
            throw MQTTError(.journalWriteFailed, "cannot append to \(path): \(error)")
        }
    }

    /// Records that entries left the queue: acknowledged (`reason` nil) or dropped.
    public func remove(_ seqs: [UInt64], reason: ForwardQueue.DropReason? = nil) throws(MQTTError) {
        guard !seqs.isEmpty else { return }
        let records = seqs.map { seq in
            Array((reason.map { "{\"drop\":\(seq),\"reason\":\"\($0.rawValue)\"}" } ?? "{\"ack\":\(seq)}").utf8)
        }
        do {
            try journal.append(records)
        } catch {
            throw MQTTError(.journalWriteFailed, "cannot append to \(path): \(error)")
        }
        // The removal record and the entry it cancels.
        deadRecords += 2 * seqs.count
    }

    /// Whether `compact` is worth its rewrite now.
    public func shouldCompact(liveEntries: Int) -> Bool {
        deadRecords >= Self.compactionThreshold && deadRecords >= liveEntries
    }

    /// Replaces the file with just `entries`; a crash leaves the old journal or the new one.
    public func compact(_ entries: [ForwardQueue.Entry], nextSeq: UInt64) throws(MQTTError) {
        do {
            try journal.replace(with: [Array("{\"next\":\(nextSeq)}".utf8)] + entries.map(Self.record))
        } catch {
            throw MQTTError(.journalWriteFailed, "cannot rewrite \(path): \(error)")
        }
        deadRecords = 0
    }

    // MARK: - Format

    private static func tornWarning(_ count: Int) -> String {
        "skipped a torn last record (\(count) bytes without a newline): a write was cut off"
    }

    /// One entry's record (no newline: the journal frames it).
    static func record(_ entry: ForwardQueue.Entry) -> [UInt8] {
        var writer = JSONWriter(capacity: entry.payload.count + 80)
        writer.raw("{\"seq\":")
        writer.integer(Int64(entry.seq))
        writer.raw(",\"queuedAt\":")
        writer.integer(entry.queuedAt.secondsSince1970)
        writer.raw(",\"queuedAtNs\":")
        writer.integer(Int64(entry.queuedAt.nanoseconds))
        writer.raw(",\"payload\":")
        writer.string(String(decoding: entry.payload, as: UTF8.self))
        writer.byte(UInt8(ascii: "}"))
        return writer.bytes
    }

    /// The live entries in a journal's records, in seq order, and the next seq.
    static func parse(_ records: [[UInt8]]) -> Loaded {
        var entries: [UInt64: ForwardQueue.Entry] = [:]
        var highest: UInt64 = 0
        var next: UInt64 = 1
        var badRecords = 0
        func unsigned(_ value: JSONValue?) -> UInt64? {
            guard case .int(let number) = value, number >= 0 else { return nil }
            return UInt64(number)
        }
        for record in records {
            guard case .success(let value) = JSONValue.parse(record), value.objectValue != nil else {
                badRecords += 1
                continue
            }
            if let seq = unsigned(value["seq"]), let payload = value["payload"]?.stringValue,
                case .int(let seconds) = value["queuedAt"]
            {
                var nanoseconds: Int64 = 0
                if case .int(let number) = value["queuedAtNs"] { nanoseconds = number }
                guard (0..<1_000_000_000).contains(nanoseconds) else {
                    badRecords += 1
                    continue
                }
                entries[seq] = ForwardQueue.Entry(
                    seq: seq, queuedAt: FixTime(secondsSince1970: seconds, nanoseconds: Int32(nanoseconds)),
                    payload: Array(payload.utf8))
                highest = max(highest, seq)
            } else if let seq = unsigned(value["ack"]) ?? unsigned(value["drop"]) {
                entries[seq] = nil
                highest = max(highest, seq)
            } else if let value = unsigned(value["next"]) {
                next = max(next, value)
            } else {
                badRecords += 1
            }
        }
        let warnings = badRecords > 0 ? ["skipped \(badRecords) unreadable record(s)"] : []
        return Loaded(
            entries: entries.values.sorted { $0.seq < $1.seq }, nextSeq: max(next, highest + 1), warnings: warnings)
    }
}
