import Glibc

/// A file read front to back a chunk at a time, for inputs too large to
/// hold (a track import of gigabytes): `FileReader` reads whole files up
/// to a limit, this one never holds more than one chunk.
public final class ChunkedFileReader {
    private let fd: Int32
    private var chunk: [UInt8]
    /// Bytes handed out so far.
    public private(set) var offset = 0

    /// Opens `path` for reading: regular files, pipes and character
    /// devices (`/dev/stdin`); a directory is `EISDIR`.
    public init(path: String, chunkSize: Int = 1 << 20) throws(Errno) {
        let fd = try Syscall.retryingOnEINTR { open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY) }
        var info = stat()
        do {
            try Syscall.retryingOnEINTR { fstat(fd, &info) }
        } catch {
            Syscall.close(fd)
            throw error
        }
        if FileSystem.isDirectory(info) {
            Syscall.close(fd)
            throw Errno(rawValue: EISDIR)
        }
        self.fd = fd
        chunk = [UInt8](repeating: 0, count: max(1, chunkSize))
    }

    deinit { Syscall.close(fd) }

    /// The next bytes of the file, nil at its end.
    public func next() throws(Errno) -> [UInt8]? {
        let count = try Syscall.retryingOnEINTR { Glibc.read(fd, &chunk, chunk.count) }
        guard count > 0 else { return nil }
        offset += count
        return Array(chunk[0..<count])
    }
}
