import Glibc

extension FileSystem {
    /// The names in a directory, `.` and `..` left out, sorted (so callers
    /// see the same order every time). A missing directory has none.
    public static func entries(of path: String) throws(Errno) -> [String] {
        var opened: OpaquePointer?
        while true {
            opened = opendir(path)
            if opened != nil { break }
            let error = errno
            if error == EINTR { continue }
            if error == ENOENT { return [] }
            throw Errno(rawValue: error)
        }
        let stream = opened!
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw Errno.current }
                break
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Removes the empty directory `path`; a missing one is not an error.
    public static func removeDirectory(_ path: String) throws(Errno) {
        do {
            try Syscall.retryingOnEINTR { rmdir(path) }
        } catch  where error == .noSuchFile {
        }
    }
}
