import Glibc

/// An append-only file of checksummed records, one a line, for state that
/// grows by small steps and must survive a crash at any instant (the MQTT
/// queue; the track recorder):
///
///     e3069283 {"seq":42,"queuedAt":1764517000,…}
///
/// Each line is the record's CRC-32C in 8 hex digits, a space, the record
/// (which may not contain a newline) and `\n`. On reading, bytes after the
/// last newline are a write that was cut off (SIGKILL, power loss) and are
/// skipped; a complete line whose checksum does not match is counted and
/// skipped, never taken for data.
///
/// `append` only writes; `sync` waits for the disk, so the owner decides
/// how many records one fdatasync covers. A failed append is cut off
/// again, so the file never keeps half a record for the next one to land on.
///
/// Not thread-safe: one owner, on one queue.
public final class Journal {
    public struct Contents: Hashable, Sendable {
        public var records: [[UInt8]]
        /// Bytes after the last newline: a record whose write never finished.
        public var tornBytes: Int
        /// Complete lines whose checksum or form was wrong.
        public var corruptRecords: Int

        public init(records: [[UInt8]] = [], tornBytes: Int = 0, corruptRecords: Int = 0) {
            self.records = records
            self.tornBytes = tornBytes
            self.corruptRecords = corruptRecords
        }
    }

    public let path: String
    public let mode: mode_t
    private var descriptor: FileDescriptor?
    /// Where the next record goes: the end of the last complete one.
    public private(set) var size = 0

    public init(path: String, mode: mode_t = 0o600) {
        self.path = path
        self.mode = mode
    }

    public var isOpen: Bool { descriptor != nil }

    /// Reads the journal (a missing one is created empty), cuts off a torn
    /// last record so the next append starts a line of its own, and opens
    /// it for appending. A file over `limit` bytes is `EFBIG`, not loaded.
    public func open(limit: Int) throws(Errno) -> Contents {
        close()
        let bytes: [UInt8]
        do {
            bytes = try FileReader.read(path, limit: limit)
        } catch  where error == .noSuchFile {
            bytes = []
        }
        guard bytes.count <= limit else { throw Errno(rawValue: EFBIG) }
        let contents = Self.decode(bytes)
        let opened = FileDescriptor(
            adopting: try Syscall.retryingOnEINTR { Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, mode) })
        let complete = bytes.count - contents.tornBytes
        if contents.tornBytes > 0 { try Syscall.retryingOnEINTR { ftruncate(opened.rawValue, off_t(complete)) } }
        descriptor = opened
        size = complete
        return contents
    }

    /// Writes `records` at the end in one write, without waiting for the disk.
    /// A record with a newline is `EINVAL` (nothing is written).
    public func append(_ records: [[UInt8]]) throws(Errno) {
        guard let fd = descriptor?.rawValue else { throw Errno.badFileDescriptor }
        var bytes: [UInt8] = []
        for record in records {
            guard !record.contains(0x0A) else { throw Errno.invalidArgument }
            bytes += Self.encode(record)
        }
        do {
            try Syscall.writeAll(fd, bytes)
        } catch {
            // A short write (ENOSPC halfway) leaves a torn record; remove it
            // so later appends stay readable. If even that fails, reading
            // skips it as torn or corrupt.
            _ = try? Syscall.retryingOnEINTR { ftruncate(fd, off_t(size)) }
            throw error
        }
        size += bytes.count
    }

    public func append(_ record: [UInt8]) throws(Errno) {
        try append([record])
    }

    /// Waits until every appended record is on the disk.
    public func sync() throws(Errno) {
        guard let fd = descriptor?.rawValue else { throw Errno.badFileDescriptor }
        try Syscall.retryingOnEINTR { fdatasync(fd) }
    }

    /// Replaces the whole journal with `records` (atomically: a crash leaves
    /// the old journal or the new one) and reopens it for appending. On
    /// failure to write the old journal stays open and unchanged.
    public func replace(with records: [[UInt8]]) throws(Errno) {
        var bytes: [UInt8] = []
        for record in records {
            guard !record.contains(0x0A) else { throw Errno.invalidArgument }
            bytes += Self.encode(record)
        }
        try AtomicFile.write(bytes, to: path, mode: mode)
        // The old descriptor now names the replaced file: appends to it would be lost.
        close()
        descriptor = FileDescriptor(
            adopting: try Syscall.retryingOnEINTR { Glibc.open(path, O_WRONLY | O_APPEND | O_CLOEXEC) })
        size = bytes.count
    }

    /// Takes over an open descriptor (`openAppending`).
    func adopt(_ descriptor: FileDescriptor, size: Int) {
        self.descriptor = descriptor
        self.size = size
    }

    public func close() {
        descriptor?.close()
        descriptor = nil
    }

    // MARK: - Format

    /// One record's line: checksum, space, record, newline.
    public static func encode(_ record: [UInt8]) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(record.count + 10)
        let crc = CRC32C.checksum(record)
        for shift in stride(from: 28, through: 0, by: -4) { line.append(hexDigit(UInt8((crc >> UInt32(shift)) & 0xF))) }
        line.append(0x20)
        line += record
        line.append(0x0A)
        return line
    }

    /// The records in a journal's bytes, in order.
    public static func decode(_ bytes: [UInt8]) -> Contents {
        var contents = Contents()
        var start = 0
        while let newline = bytes[start...].firstIndex(of: 0x0A) {
            if let record = record(inLine: bytes[start..<newline]) {
                contents.records.append(Array(record))
            } else {
                contents.corruptRecords += 1
            }
            start = newline + 1
        }
        contents.tornBytes = bytes.count - start
        return contents
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 + nibble : 0x61 + nibble - 10
    }
}
