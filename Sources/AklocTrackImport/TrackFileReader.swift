import AklocProtocol

/// The points of a track file, one at a time, whatever its format: GPX
/// (the first thing in it is `<`) or one of Google's JSON exports (`{`),
/// told apart by content, not by name. Each point comes with the offset of
/// the record it is in, so the daemon's refusal of a point can name where
/// in the file it is. Memory is bounded by `maxRecordBytes`, not by the
/// file (docs/track.md, "Importing").
public struct TrackFileReader {
    public enum Format: String, Sendable {
        case gpx = "GPX"
        case googleJSON = "Google location JSON"
    }

    // Two optionals rather than an enum: a reader mutated through an
    // optional stays in place, one taken out of an enum case is copied,
    // and with it the buffers it holds.
    private var gpx: GPXReader?
    private var google: GoogleLocationReader?
    public let format: Format
    /// The most bytes one JSON record or XML token may have.
    public static let defaultMaxRecordBytes = 16 << 20

    /// `source` gives the file's next chunk, nil at its end.
    public init(
        maxRecordBytes: Int = defaultMaxRecordBytes, source: @escaping () throws(TrackImportError) -> [UInt8]?
    ) throws(TrackImportError) {
        try self.init(stream: ByteStream(source: source), maxRecordBytes: maxRecordBytes)
    }

    /// A file already in memory, read `chunkSize` bytes at a time (tests).
    public init(bytes: [UInt8], chunkSize: Int = 1 << 16, maxRecordBytes: Int = defaultMaxRecordBytes)
        throws(TrackImportError)
    {
        try self.init(stream: ByteStream(bytes: bytes, chunkSize: chunkSize), maxRecordBytes: maxRecordBytes)
    }

    private init(stream: ByteStream, maxRecordBytes: Int) throws(TrackImportError) {
        var stream = stream
        // A byte-order mark, as Windows editors write one.
        if try stream.peek() == 0xEF {
            for byte: UInt8 in [0xEF, 0xBB, 0xBF] {
                guard try stream.peek() == byte else { throw .at(stream.offset, .unknownFormat, "not UTF-8 text") }
                stream.advance()
            }
        }
        switch try stream.skipWhitespace() {
        case UInt8(ascii: "<")?:
            gpx = GPXReader(stream: stream)
            format = .gpx
        case UInt8(ascii: "{")?:
            google = GoogleLocationReader(stream: stream, maxRecordBytes: maxRecordBytes)
            format = .googleJSON
        case UInt8(ascii: "[")?:
            throw .at(
                stream.offset, .unknownFormat,
                "a JSON array (the iPhone's Timeline export is not read; GPX, Records.json and Timeline.json are)")
        case nil:
            throw .at(stream.offset, .malformed, "the file is empty")
        default:
            throw .at(stream.offset, .unknownFormat, "neither GPX (XML) nor a Google location export (JSON)")
        }
    }

    /// Points passed over so far because they have no time (GPX track
    /// points without `<time>`; docs/track.md, "Importing").
    public var untimed: Int { gpx?.untimed ?? 0 }

    /// The next point and the offset of the record it is in; nil at the end.
    public mutating func next() throws(TrackImportError) -> (point: ImportPoint, offset: Int)? {
        if gpx != nil { return try gpx!.next() }
        return try google!.next()
    }
}
