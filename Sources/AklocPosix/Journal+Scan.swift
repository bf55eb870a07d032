import Glibc

extension Journal {
    /// What `scan` went over.
    public struct Scan: Hashable, Sendable {
        /// Where the scan stopped: the end of the last line it consumed.
        public var end: Int
        /// Complete lines whose checksum or form was wrong (skipped).
        public var corruptRecords = 0
        /// Bytes after the last newline at the end of the file (skipped).
        public var tornBytes = 0
        /// The file's identity and size when it was opened.
        public var inode: UInt64
        public var size: Int
        /// Whether `body` asked to stop before the end of the file.
        public var stopped = false
    }

    /// The file's identity (inode) and size, or nil when it does not exist.
    public static func identity(of path: String) throws(Errno) -> (inode: UInt64, size: Int)? {
        guard let info = try FileSystem.status(path) else { return nil }
        return (UInt64(info.st_ino), Int(info.st_size))
    }

    /// Reads the records of the journal at `path` from byte `offset` (the
    /// start of a line) in bounded chunks, without loading the whole file,
    /// and hands each good one to `body` with the offset just past it;
    /// `body` returns false to stop. Corrupt lines are counted and skipped
    /// like `decode` does; a torn tail is counted, never passed on.
    @discardableResult
    public static func scan(
        _ path: String, from offset: Int = 0, chunkSize: Int = 1 << 18,
        _ body: (_ record: ArraySlice<UInt8>, _ end: Int) -> Bool
    ) throws(Errno) -> Scan {
        let fd = try Syscall.retryingOnEINTR { Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY) }
        defer { Syscall.close(fd) }
        var info = stat()
        try Syscall.retryingOnEINTR { fstat(fd, &info) }
        guard FileSystem.isRegularFile(info) else { throw Errno.invalidArgument }
        var scan = Scan(end: offset, inode: UInt64(info.st_ino), size: Int(info.st_size))
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var position = offset
        var bufferStart = offset
        while true {
            let count = try Syscall.retryingOnEINTR {
                chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, chunkSize, off_t(position)) }
            }
            if count == 0 { break }
            position += count
            buffer += chunk[0..<count]
            var start = 0
            while let newline = buffer[start...].firstIndex(of: 0x0A) {
                let end = bufferStart + newline + 1
                if let record = record(inLine: buffer[start..<newline]) {
                    if !body(record, end) {
                        scan.end = end
                        scan.stopped = true
                        return scan
                    }
                } else {
                    scan.corruptRecords += 1
                }
                scan.end = end
                start = newline + 1
            }
            buffer.removeFirst(start)
            bufferStart += start
        }
        scan.tornBytes = buffer.count
        return scan
    }

    /// The record a line holds (without its newline), nil when the line is
    /// not checksum, space, record, or the checksum does not match.
    public static func record(inLine line: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard line.count >= 9, line[line.startIndex + 8] == 0x20 else { return nil }
        var expected: UInt32 = 0
        for byte in line[line.startIndex..<line.startIndex + 8] {
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: return nil
            }
            expected = expected << 4 | UInt32(digit)
        }
        let record = line[(line.startIndex + 9)...]
        return CRC32C.checksum(record) == expected ? record : nil
    }

    /// Opens the journal for appending without reading all of it (a day of
    /// track can be megabytes): only the tail is read, a torn last record
    /// is cut off, and the last good record is returned, if the tail holds one.
    public func openAppending(tail: Int = 1 << 16) throws(Errno) -> (last: [UInt8]?, tornBytes: Int) {
        close()
        let opened = FileDescriptor(
            adopting: try Syscall.retryingOnEINTR { Glibc.open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, mode) })
        var info = stat()
        try Syscall.retryingOnEINTR { fstat(opened.rawValue, &info) }
        let fileSize = Int(info.st_size)
        let start = max(0, fileSize - tail)
        var bytes = [UInt8](repeating: 0, count: fileSize - start)
        var got = 0
        while got < bytes.count {
            let count = try Syscall.retryingOnEINTR {
                bytes.withUnsafeMutableBytes {
                    pread(opened.rawValue, $0.baseAddress! + got, $0.count - got, off_t(start + got))
                }
            }
            if count == 0 { break }
            got += count
        }
        bytes.removeLast(bytes.count - got)
        let lastNewline = bytes.lastIndex(of: 0x0A)
        var complete = lastNewline.map { start + $0 + 1 } ?? (start == 0 ? 0 : fileSize)
        let torn = fileSize - complete
        if torn > 0 { try Syscall.retryingOnEINTR { ftruncate(opened.rawValue, off_t(complete)) } }
        if lastNewline == nil, start > 0 {
            // A tail longer than any record without a newline is garbage:
            // end its line, so the next record starts one of its own.
            try Syscall.writeAll(opened.rawValue, [0x0A])
            complete += 1
        }
        var last: [UInt8]?
        if let lastNewline {
            let lineStart = bytes[..<lastNewline].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
            if lineStart > 0 || start == 0 {
                last = Self.record(inLine: bytes[lineStart..<lastNewline]).map(Array.init)
            }
        }
        adopt(opened, size: complete)
        return (last, torn)
    }
}
