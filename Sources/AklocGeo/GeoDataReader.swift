import AklocCore

/// Bounds-checked little-endian reads over one mapped data file (data/,
/// DESIGN §9). The files come from `scripts/update-geodata`, but a truncated
/// or corrupted file must give an error, never a read past the mapping, so
/// every read is checked against the buffer it was given.
public struct GeoDataReader: Sendable {
    /// A read outside the file, or a header that does not match.
    public typealias Error = CodedError<GeoDataErrorCode>

    // The mapping outlives every reader: the daemon maps each file once at
    // start and never unmaps it while serving.
    nonisolated(unsafe) public let bytes: UnsafeRawBufferPointer

    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    public var count: Int { bytes.count }

    @inline(__always)
    private func check(_ offset: Int, _ size: Int) throws(Error) {
        guard offset >= 0, size >= 0, offset <= bytes.count - size else {
            throw Error(.truncated, "read of \(size) bytes at \(offset) past the end (\(bytes.count) bytes)")
        }
    }

    public func uint8(at offset: Int) throws(Error) -> UInt8 {
        try check(offset, 1)
        return bytes[offset]
    }

    public func uint16(at offset: Int) throws(Error) -> UInt16 {
        try check(offset, 2)
        return UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    public func uint32(at offset: Int) throws(Error) -> UInt32 {
        try check(offset, 4)
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    public func int32(at offset: Int) throws(Error) -> Int32 {
        try check(offset, 4)
        return Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self))
    }

    /// UTF-8 text of `length` bytes at `offset`.
    public func string(at offset: Int, length: Int) throws(Error) -> String {
        try check(offset, length)
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)]), as: UTF8.self)
    }

    /// A sub-range, checked once, for tight loops that then read it directly.
    public func slice(at offset: Int, length: Int) throws(Error) -> UnsafeRawBufferPointer {
        try check(offset, length)
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)])
    }
}

/// The stable codes of `GeoDataReader.Error`.
public enum GeoDataErrorCode: String, CodedErrorCode {
    case truncated, badMagic, badVersion, corrupt
}
