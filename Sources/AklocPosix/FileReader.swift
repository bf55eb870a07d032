import Glibc

/// Bounded reads of whole files: a config, a state file or a journal is
/// read into memory only up to a limit its owner chooses, so a huge or
/// endless file (a FIFO, `/dev/zero`) costs at most `limit + 1` bytes.
public enum FileReader {
    /// Reads `path`, at most `limit + 1` bytes: a result longer than `limit`
    /// means the file is too large, found without reading all of it.
    /// Regular files and character devices only (`--config /dev/null` means
    /// "no settings", as for most Unix daemons); a directory is `EISDIR`,
    /// anything else `EINVAL`.
    public static func read(_ path: String, limit: Int) throws(Errno) -> [UInt8] {
        let fd = try Syscall.retryingOnEINTR { open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY) }
        defer { Syscall.close(fd) }
        var info = stat()
        try Syscall.retryingOnEINTR { fstat(fd, &info) }
        if FileSystem.isDirectory(info) { throw Errno(rawValue: EISDIR) }
        guard FileSystem.isRegularFile(info) || (info.st_mode & S_IFMT) == S_IFCHR else { throw Errno.invalidArgument }
        var bytes: [UInt8] = []
        if FileSystem.isRegularFile(info) { bytes.reserveCapacity(min(Int(info.st_size), limit) + 1) }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while bytes.count <= limit {
            let wanted = min(chunk.count, limit + 1 - bytes.count)
            let count = try Syscall.retryingOnEINTR { Glibc.read(fd, &chunk, wanted) }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }
}
