/// Splits a byte stream into lines (NDJSON framing, DESIGN §3).
///
/// Feed it whatever a non-blocking `read` returned with `append`, then call
/// `next()` until it returns nil. A line is returned without its terminator
/// (`\n`, or `\r\n`). A line longer than `maxLineLength` bytes (terminator not
/// counted) yields `.lineTooLong` once, as soon as that is certain (before
/// the newline arrives), and from then on the framer discards all input: the
/// daemon replies `lineTooLong` and closes the connection.
///
/// Cost is linear in the input: bytes already scanned for a newline are not
/// scanned again when a line arrives in many small reads, each line is copied
/// once, and consumed bytes are dropped in amortised O(1).
public struct LineFramer: Sendable {
    /// 64 KiB: the longest accepted line, terminator not counted.
    public static let defaultMaxLineLength = 65_536

    public enum Frame: Hashable, Sendable {
        case line([UInt8])
        /// The current line passed the cap; the framer now ignores all input.
        case lineTooLong
    }

    public let maxLineLength: Int
    /// Buffer capacity kept between lines; more is released once drained.
    static let retainedCapacity = 4096
    private var buffer: [UInt8] = []
    /// Start of the first unconsumed byte.
    private var start = 0
    /// Bytes before this index (and at or after `start`) hold no newline.
    private var scanned = 0
    public private(set) var overflowed = false

    public init(maxLineLength: Int = LineFramer.defaultMaxLineLength) {
        precondition(maxLineLength > 0)
        self.maxLineLength = maxLineLength
    }

    /// Bytes received but not yet returned as a line.
    public var pendingByteCount: Int { buffer.count - start }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !overflowed, !bytes.isEmpty else { return }
        compactIfWorthwhile()
        buffer.append(contentsOf: bytes)
    }

    public mutating func append<Bytes: Collection<UInt8>>(contentsOf bytes: Bytes) {
        guard !overflowed, !bytes.isEmpty else { return }
        compactIfWorthwhile()
        buffer.append(contentsOf: bytes)
    }

    /// The next complete line, `.lineTooLong` once if the cap was passed, or
    /// nil when more input is needed.
    public mutating func next() -> Frame? {
        guard !overflowed else { return nil }
        let newline: Int? = buffer.withUnsafeBufferPointer { all in
            var index = scanned
            while index < all.count {
                if all[index] == 0x0A { return index }
                index += 1
            }
            return nil
        }
        guard let newline else {
            scanned = buffer.count
            // One byte of slack: a trailing "\r" may still turn out to be half of "\r\n".
            if pendingByteCount > maxLineLength + 1
                || (pendingByteCount == maxLineLength + 1 && buffer.last != 0x0D)
            {
                return overflow()
            }
            return nil
        }
        var end = newline
        if end > start, buffer[end - 1] == 0x0D { end -= 1 }
        guard end - start <= maxLineLength else { return overflow() }
        let line = Array(buffer[start..<end])
        start = newline + 1
        scanned = start
        if start == buffer.count {
            // Keep a small buffer for the next read; give a large one back (a
            // daemon holds one framer per client, up to 10 000 of them).
            buffer.removeAll(keepingCapacity: buffer.capacity <= LineFramer.retainedCapacity)
            start = 0
            scanned = 0
        }
        return .line(line)
    }

    private mutating func overflow() -> Frame {
        overflowed = true
        buffer = []
        start = 0
        scanned = 0
        return .lineTooLong
    }

    /// Drops consumed bytes once they are at least half the buffer, so the
    /// total copying stays linear in the input.
    private mutating func compactIfWorthwhile() {
        guard start > 0, start >= buffer.count - start else { return }
        buffer.removeSubrange(0..<start)
        scanned -= start
        start = 0
    }
}
