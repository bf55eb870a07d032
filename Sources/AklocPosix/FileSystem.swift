import Glibc

/// Path operations the daemon's config, state and journal code share, all
/// through `Syscall` so `EINTR` and errors are handled one way.
public enum FileSystem {
    /// `stat` of `path`, or nil when it does not exist.
    public static func status(_ path: String) throws(Errno) -> stat? {
        var info = stat()
        do {
            try Syscall.retryingOnEINTR { stat(path, &info) }
        } catch  where error == .noSuchFile {
            return nil
        }
        return info
    }

    /// `fstat` of an open descriptor.
    public static func status(of fd: Int32) throws(Errno) -> stat {
        var info = stat()
        try Syscall.retryingOnEINTR { fstat(fd, &info) }
        return info
    }

    /// Flushes an open file to its device; a descriptor that cannot be
    /// synced (a pipe, EINVAL) has nothing to flush.
    public static func sync(_ fd: Int32) throws(Errno) {
        do {
            try Syscall.retryingOnEINTR { fsync(fd) }
        } catch  where error == .invalidArgument {
            return
        }
    }

    /// Whether this process may write to `path` (access(2) with W_OK).
    public static func isWritable(_ path: String) -> Bool {
        access(path, W_OK) == 0
    }

    public static func isDirectory(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFDIR }
    public static func isRegularFile(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFREG }

    /// Creates `path` with `mode` if it is missing; an existing directory is
    /// left as it is (an administrator may have chosen other permissions).
    public static func createDirectory(_ path: String, mode: mode_t) throws(Errno) {
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

    public static func rename(_ source: String, to destination: String) throws(Errno) {
        try Syscall.retryingOnEINTR { Glibc.rename(source, destination) }
    }

    /// Removes `path`; a missing file is not an error.
    public static func remove(_ path: String) throws(Errno) {
        do {
            try Syscall.retryingOnEINTR { unlink(path) }
        } catch  where error == .noSuchFile {
        }
    }

    /// The directory part of `path` ("." for a bare name).
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    public static func fileName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// Makes a rename or a new file in `path` durable.
    public static func syncDirectory(_ path: String) throws(Errno) {
        let fd = try Syscall.retryingOnEINTR { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { Syscall.close(fd) }
        try Syscall.retryingOnEINTR { fsync(fd) }
    }
}
