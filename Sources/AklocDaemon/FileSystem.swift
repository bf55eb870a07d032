import AklocPosix
import AklocSystemd
import Glibc

/// File operations the daemon's config and state code share, all through
/// `Syscall` so `EINTR` and errors are handled in one way.
enum FileSystem {
    /// `stat` of `path`, or nil when it does not exist.
    static func status(_ path: String) throws(Errno) -> stat? {
        var info = stat()
        do {
            try Syscall.retryingOnEINTR { stat(path, &info) }
        } catch  where error == .noSuchFile {
            return nil
        }
        return info
    }

    static func isDirectory(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFDIR }
    static func isRegularFile(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFREG }

    /// Reads a regular file, at most `limit + 1` bytes: a result longer than
    /// `limit` means the file is too large, without reading all of it.
    static func readFile(_ path: String, limit: Int) throws(Errno) -> [UInt8] {
        let fd = try Syscall.retryingOnEINTR { open(path, O_RDONLY | O_CLOEXEC) }
        defer { Syscall.close(fd) }
        var info = stat()
        try Syscall.retryingOnEINTR { fstat(fd, &info) }
        if isDirectory(info) { throw Errno(rawValue: EISDIR) }
        // A character device is allowed so `--config /dev/null` means "no settings",
        // as it does for most Unix daemons; reading stays bounded by `limit`.
        guard isRegularFile(info) || (info.st_mode & S_IFMT) == S_IFCHR else { throw Errno.invalidArgument }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count <= limit {
            let wanted = min(chunk.count, limit + 1 - bytes.count)
            let count = try Syscall.retryingOnEINTR { read(fd, &chunk, wanted) }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }

    /// Creates `path` with `mode` if it is missing; an existing directory is
    /// left as it is (an administrator may have chosen other permissions).
    static func createDirectory(_ path: String, mode: mode_t) throws(Errno) {
        do {
            try Syscall.retryingOnEINTR { mkdir(path, mode) }
        } catch  where error == .fileExists {
            guard let info = try status(path), isDirectory(info) else { throw Errno(rawValue: ENOTDIR) }
            return
        }
        // mkdir's mode is filtered by the umask; the state directory must
        // not end up wider or narrower than asked.
        try Syscall.retryingOnEINTR { chmod(path, mode) }
    }

    static func rename(_ source: String, to destination: String) throws(Errno) {
        try Syscall.retryingOnEINTR { Glibc.rename(source, destination) }
    }

    static func remove(_ path: String) {
        _ = try? Syscall.retryingOnEINTR { unlink(path) }
    }

    /// The directory part of `path` ("." for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func fileName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// Replaces `path` with `bytes` so that a crash at any point leaves
    /// either the old or the new content, never a mix: temp file in the same
    /// directory, fsync, rename over the old file, fsync the directory so the
    /// rename itself is durable.
    ///
    /// The new file gets the old file's mode (and owner, when permitted), or
    /// `mode` when there was no old file.
    static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t) throws(Errno) {
        let directory = directory(of: path)
        let existing = try status(path)
        var template = Array("\(directory)/.\(fileName(of: path)).tmp-XXXXXX".utf8CString)
        let fd = try Syscall.retryingOnEINTR { mkstemp(&template) }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        _ = try? Syscall.retryingOnEINTR { fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var renamed = false
        defer { if !renamed { remove(temporary) } }
        do {
            defer { Syscall.close(fd) }
            try Syscall.writeAll(fd, bytes)
            if let existing {
                // Only root may give a file away; anyone else can at least
                // keep the group if they belong to it (akloc on /etc/akloc).
                do {
                    try Syscall.retryingOnEINTR { fchown(fd, existing.st_uid, existing.st_gid) }
                } catch {
                    _ = try? Syscall.retryingOnEINTR { fchown(fd, uid_t.max, existing.st_gid) }
                }
            }
            let newMode = existing.map { $0.st_mode & 0o7777 } ?? mode
            try Syscall.retryingOnEINTR { fchmod(fd, newMode) }
            try Syscall.retryingOnEINTR { fsync(fd) }
        }
        try rename(temporary, to: path)
        renamed = true
        try syncDirectory(directory)
    }

    static func syncDirectory(_ path: String) throws(Errno) {
        let fd = try Syscall.retryingOnEINTR { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { Syscall.close(fd) }
        try Syscall.retryingOnEINTR { fsync(fd) }
    }
}
