import Glibc

/// Replaces a file's content so that a crash at any point leaves either the
/// old or the new content, never a mix, and so that a write that returns
/// has reached the disk: temp file in the same directory, fsync, rename over
/// the old file, fsync of the directory so the rename itself is durable.
///
/// On any failure (ENOSPC, EROFS, EDQUOT, EIO) the old file is untouched
/// and the temp file is removed: the caller may report the write as not done.
public enum AtomicFile {
    /// Writes `bytes` to `path`. The new file gets the old file's mode (and
    /// owner, when permitted), or `mode` when there was no old file.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t) throws(Errno) {
        let directory = FileSystem.directory(of: path)
        let existing = try FileSystem.status(path)
        var template = Array("\(directory)/.\(FileSystem.fileName(of: path)).tmp-XXXXXX".utf8CString)
        let fd = try Syscall.retryingOnEINTR { mkstemp(&template) }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        _ = try? Syscall.retryingOnEINTR { fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var renamed = false
        defer { if !renamed { try? FileSystem.remove(temporary) } }
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
        try FileSystem.rename(temporary, to: path)
        renamed = true
        try FileSystem.syncDirectory(directory)
    }
}
