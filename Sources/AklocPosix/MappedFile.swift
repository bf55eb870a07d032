import Glibc

/// A whole regular file mapped read-only and shared (`PROT_READ`,
/// `MAP_SHARED`): the geo data files (data/*.bin, DESIGN §9) are read in
/// place, so a lookup touches only the pages on its path and idle memory is
/// page cache the kernel can drop, not the daemon's heap.
///
/// The mapping lives as long as the value; `bytes` must not be used after
/// it is gone. The descriptor is closed once the file is mapped (the mapping
/// keeps the file open). An empty file maps to an empty buffer.
public final class MappedFile: Sendable {
    public let path: String
    // Read-only pages for the whole life of the object: safe to share.
    nonisolated(unsafe) public let bytes: UnsafeRawBufferPointer

    /// How the pages will be read.
    public enum Access: Sendable {
        /// The kernel's default: a page fault reads ahead around the page.
        case normal
        /// Lookups that hop through an index (`MADV_RANDOM`): a fault reads
        /// the one page it needs, so a lookup makes resident only its path,
        /// not the read-ahead around every page on it (bench/NOTES.md).
        case random
    }

    /// Maps `path`; `limit` bounds the size a caller accepts (a damaged or
    /// wrong path must not map gigabytes). Not a regular file: `EINVAL`; a
    /// directory: `EISDIR`; larger than `limit`: `EFBIG`.
    public init(path: String, limit: Int = 1 << 30, access: Access = .normal) throws(Errno) {
        let fd = try Syscall.retryingOnEINTR { open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY) }
        defer { Syscall.close(fd) }
        var info = stat()
        try Syscall.retryingOnEINTR { fstat(fd, &info) }
        if FileSystem.isDirectory(info) { throw Errno(rawValue: EISDIR) }
        guard FileSystem.isRegularFile(info) else { throw Errno.invalidArgument }
        let size = Int(info.st_size)
        guard size <= limit else { throw Errno(rawValue: EFBIG) }
        self.path = path
        guard size > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        let address = try Syscall.mapping { mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0) }
        // Advice only: a kernel that refuses it reads ahead as before.
        if access == .random { _ = madvise(address, size, MADV_RANDOM) }
        bytes = UnsafeRawBufferPointer(start: address, count: size)
    }

    deinit {
        if let base = bytes.baseAddress { _ = munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }
}

extension Syscall {
    /// `mmap`, which reports failure as `MAP_FAILED` plus `errno`; retried
    /// on `EINTR` like every other call.
    static func mapping(_ body: () -> UnsafeMutableRawPointer?) throws(Errno) -> UnsafeMutableRawPointer {
        while true {
            let result = body()
            let error = errno
            if let result, result != MAP_FAILED { return result }
            if error == EINTR { continue }
            throw Errno(rawValue: error)
        }
    }
}
