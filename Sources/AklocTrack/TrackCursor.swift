import AklocPosix

/// Where a `track` page goes on: a day file, which incarnation of it (the
/// id in its header: a file cleared or rewritten gets a new one), and the byte offset
/// of the next record. On the wire it is opaque text with a checksum, so a
/// made-up or mangled cursor is refused rather than read from a random offset.
public struct TrackCursor: Hashable, Sendable {
    public var day: Int64
    public var file: UInt64
    public var offset: Int

    public init(day: Int64, file: UInt64, offset: Int) {
        self.day = day
        self.file = file
        self.offset = offset
    }

    /// `d20423.f1a2b3c4d5e6f.o4096.c1234abcd`
    public var text: String {
        let body = "d\(day).f\(String(file, radix: 16)).o\(offset)"
        return body + ".c" + String(CRC32C.checksum(Array(body.utf8)), radix: 16)
    }

    public init?(text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[3].hasPrefix("c") else { return nil }
        let body = parts[0..<3].joined(separator: ".")
        guard String(CRC32C.checksum(Array(body.utf8)), radix: 16) == parts[3].dropFirst(),
            parts[0].hasPrefix("d"), parts[1].hasPrefix("f"), parts[2].hasPrefix("o"),
            let day = Int64(parts[0].dropFirst()), let file = UInt64(parts[1].dropFirst(), radix: 16),
            let offset = Int(parts[2].dropFirst()), offset >= 0
        else { return nil }
        self.init(day: day, file: file, offset: offset)
    }
}
