/// A file read a chunk at a time, with the absolute offset of each byte and
/// the bytes of one record kept aside while it is read, so a reader walks
/// gigabytes holding one chunk and one record.
struct ByteStream {
    typealias Source = () throws(TrackImportError) -> [UInt8]?

    private let source: Source
    var buffer: [UInt8] = []
    var position = 0
    /// The absolute offset of `buffer[0]`.
    private(set) var base = 0
    private var ended = false
    private var captureStart: Int?
    private var captured: [UInt8] = []
    private var captureOffset = 0
    private var captureLimit = Int.max

    init(source: @escaping Source) {
        self.source = source
    }

    /// Bytes from an array, for tests and small inputs.
    init(bytes: [UInt8], chunkSize: Int = 1 << 16) {
        var offset = 0
        self.init { () throws(TrackImportError) -> [UInt8]? in
            guard offset < bytes.count else { return nil }
            let end = min(bytes.count, offset + max(1, chunkSize))
            defer { offset = end }
            return Array(bytes[offset..<end])
        }
    }

    var offset: Int { base + position }

    /// The next byte, nil at the end of the file.
    @inline(__always)
    mutating func peek() throws(TrackImportError) -> UInt8? {
        if position < buffer.count { return buffer[position] }
        return try refill() ? buffer[position] : nil
    }

    @inline(__always)
    mutating func advance() { position += 1 }

    /// Whether more bytes arrived; keeps what is being captured.
    mutating func refill() throws(TrackImportError) -> Bool {
        while position >= buffer.count {
            if ended { return false }
            if let start = captureStart {
                captured += buffer[start...]
                captureStart = 0
                if captured.count > captureLimit {
                    throw .at(
                        captureOffset, .tooLarge, "a record of more than \(captureLimit) bytes (the most one may have)")
                }
            }
            base += buffer.count
            position = 0
            guard let chunk = try source() else {
                ended = true
                buffer = []
                return false
            }
            buffer = chunk
        }
        return true
    }

    /// Starts keeping the bytes from here on (at most `limit`).
    mutating func beginCapture(limit: Int) {
        captured.removeAll(keepingCapacity: true)
        captureStart = position
        captureOffset = offset
        captureLimit = limit
    }

    /// The bytes since `beginCapture`.
    mutating func endCapture() throws(TrackImportError) -> [UInt8] {
        if let start = captureStart, start < position { captured += buffer[start..<position] }
        captureStart = nil
        if captured.count > captureLimit {
            throw .at(captureOffset, .tooLarge, "a record of more than \(captureLimit) bytes (the most one may have)")
        }
        return captured
    }

    /// Skips spaces, tabs and line ends; returns the next byte.
    mutating func skipWhitespace() throws(TrackImportError) -> UInt8? {
        while let byte = try peek() {
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return byte }
            advance()
        }
        return nil
    }
}
