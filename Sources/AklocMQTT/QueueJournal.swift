import AklocCore
import AklocJSON
import AklocPosix
import AklocProtocol
import AklocSystemd
import Foundation
import Glibc

/// The store-and-forward queue on disk: one append-only file of NDJSON
/// records in the state directory, `mqtt-queue.ndjson`.
///
///     {"next":42}                                                   first line after a compaction
///     {"seq":42,"queuedAt":1764517000,"queuedAtNs":12000000,"payload":"{\"_type\":\"location\",…}"}
///     {"ack":42}                                                    the broker took it (PUBACK)
///     {"drop":43,"reason":"maxAge"}                                 a limit dropped it
///
/// An entry is appended and fsynced before it is published, so a fix the
/// forwarder accepted survives SIGKILL and power loss. Ack and drop records
/// are written without fsync: losing one means the entry is published again
/// after a crash, a duplicate QoS 1 allows anyway, and it saves a disk flush
/// per message. A crash in the middle of a write leaves a last line without
/// its newline; `open` skips it with a warning. The file is rewritten
/// (atomically) with only the live entries at start-up and whenever dead
/// records outnumber live ones.
///
/// Not thread-safe: the forwarder owns it on the daemon's queue.
public final class QueueJournal {
    public static let fileName = "mqtt-queue.ndjson"
    /// A bigger journal is not ours to load in one piece (the byte limit
    /// caps the live queue far below this).
    public static let maximumFileSize = 1 << 30
    /// Compaction waits for this many dead records, so a quiet queue is not
    /// rewritten on every acknowledgement.
    public static let compactionThreshold = 512

    public let path: String
    private var fd: Int32 = -1
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
    }

    deinit {
        if fd >= 0 { Syscall.close(fd) }
    }

    /// Reads the journal (a missing one is empty), compacts it to the live
    /// entries, and opens it for appending.
    public func open() throws(MQTTError) -> Loaded {
        var bytes: [UInt8] = []
        do {
            bytes = try Self.read(path)
        } catch  where error == .noSuchFile {
            bytes = []
        } catch {
            throw MQTTError(.journalUnreadable, "cannot read \(path): \(error)")
        }
        let loaded = Self.parse(bytes)
        try rewrite(loaded.entries, nextSeq: loaded.nextSeq)
        return loaded
    }

    /// Appends an entry and waits for it to reach the disk.
    public func append(_ entry: ForwardQueue.Entry) throws(MQTTError) {
        try write(Self.record(entry), sync: true)
    }

    /// Records that entries left the queue: acknowledged (`reason` nil) or dropped.
    public func remove(_ seqs: [UInt64], reason: ForwardQueue.DropReason? = nil) throws(MQTTError) {
        guard !seqs.isEmpty else { return }
        var bytes: [UInt8] = []
        for seq in seqs {
            let line = reason.map { "{\"drop\":\(seq),\"reason\":\"\($0.rawValue)\"}\n" } ?? "{\"ack\":\(seq)}\n"
            bytes += Array(line.utf8)
        }
        try write(bytes, sync: false)
        // The removal record and the entry it cancels.
        deadRecords += 2 * seqs.count
    }

    /// Whether `compact` is worth its rewrite now.
    public func shouldCompact(liveEntries: Int) -> Bool {
        deadRecords >= Self.compactionThreshold && deadRecords >= liveEntries
    }

    /// Replaces the file with just `entries`: temp file, fsync, rename, fsync
    /// of the directory, so a crash leaves the old journal or the new one.
    public func compact(_ entries: [ForwardQueue.Entry], nextSeq: UInt64) throws(MQTTError) {
        try rewrite(entries, nextSeq: nextSeq)
    }

    // MARK: - Format

    struct Record: Decodable {
        var next: UInt64?
        var seq: UInt64?
        var queuedAt: Int64?
        var queuedAtNs: Int32?
        var payload: String?
        var ack: UInt64?
        var drop: UInt64?
    }

    static func record(_ entry: ForwardQueue.Entry) -> [UInt8] {
        var quoted = JSONWriter(capacity: entry.payload.count + 16)
        quoted.string(String(decoding: entry.payload, as: UTF8.self))
        let payload = String(decoding: quoted.bytes, as: UTF8.self)
        return Array(
            ("{\"seq\":\(entry.seq),\"queuedAt\":\(entry.queuedAt.secondsSince1970),"
                + "\"queuedAtNs\":\(entry.queuedAt.nanoseconds),\"payload\":\(payload)}\n").utf8)
    }

    /// The live entries in a journal's bytes, in seq order, and the next seq.
    static func parse(_ bytes: [UInt8]) -> Loaded {
        var entries: [UInt64: ForwardQueue.Entry] = [:]
        var highest: UInt64 = 0
        var next: UInt64 = 1
        var warnings: [String] = []
        var badLines = 0
        let decoder = JSONDecoder()
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        // Bytes after the last newline are a record whose write never finished.
        let tail = lines.removeLast()
        if !tail.isEmpty {
            warnings.append("skipped a torn last record (\(tail.count) bytes without a newline): a write was cut off")
        }
        for line in lines where !line.isEmpty {
            guard let record = try? decoder.decode(Record.self, from: Data(line)) else {
                badLines += 1
                continue
            }
            if let value = record.next { next = max(next, value) }
            if let seq = record.seq, let payload = record.payload, let seconds = record.queuedAt {
                entries[seq] = ForwardQueue.Entry(
                    seq: seq, queuedAt: FixTime(secondsSince1970: seconds, nanoseconds: record.queuedAtNs ?? 0),
                    payload: Array(payload.utf8))
                highest = max(highest, seq)
            } else if let seq = record.ack ?? record.drop {
                entries[seq] = nil
                highest = max(highest, seq)
            } else if record.next == nil {
                badLines += 1
            }
        }
        if badLines > 0 { warnings.append("skipped \(badLines) unreadable record(s)") }
        return Loaded(
            entries: entries.values.sorted { $0.seq < $1.seq }, nextSeq: max(next, highest + 1), warnings: warnings)
    }

    // MARK: - I/O

    private func write(_ bytes: [UInt8], sync: Bool) throws(MQTTError) {
        guard fd >= 0 else { throw MQTTError(.journalWriteFailed, "\(path) is not open") }
        do {
            try Syscall.writeAll(fd, bytes)
            if sync { try Syscall.retryingOnEINTR { fdatasync(fd) } }
        } catch {
            throw MQTTError(.journalWriteFailed, "cannot append to \(path): \(error)")
        }
    }

    private func rewrite(_ entries: [ForwardQueue.Entry], nextSeq: UInt64) throws(MQTTError) {
        var bytes = Array("{\"next\":\(nextSeq)}\n".utf8)
        for entry in entries { bytes += Self.record(entry) }
        let temporary = path + ".tmp"
        do {
            let out = try Syscall.retryingOnEINTR {
                Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            }
            do {
                defer { Syscall.close(out) }
                try Syscall.writeAll(out, bytes)
                try Syscall.retryingOnEINTR { fsync(out) }
            }
            try Syscall.retryingOnEINTR { rename(temporary, path) }
            let directory = try Syscall.retryingOnEINTR {
                Glibc.open(String(path[..<path.lastIndex(of: "/")!]), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            }
            defer { Syscall.close(directory) }
            try Syscall.retryingOnEINTR { fsync(directory) }
            if fd >= 0 { Syscall.close(fd) }
            fd = -1
            fd = try Syscall.retryingOnEINTR { Glibc.open(path, O_WRONLY | O_APPEND | O_CLOEXEC) }
        } catch {
            unlink(temporary)
            throw MQTTError(.journalWriteFailed, "cannot rewrite \(path): \(error)")
        }
        deadRecords = 0
    }

    private static func read(_ path: String) throws(Errno) -> [UInt8] {
        let fd = try Syscall.retryingOnEINTR { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
        defer { Syscall.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while bytes.count <= maximumFileSize {
            let count = try Syscall.retryingOnEINTR { Glibc.read(fd, &chunk, chunk.count) }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }
}
