import Glibc

extension FileSystem {
    /// The names in directory `path` (without "." and ".."), in no order;
    /// a missing directory has none.
    public static func entries(of path: String) throws(Errno) -> [String] {
        guard let directory = opendir(path) else {
            let error = Errno.current
            if error == .noSuchFile { return [] }
            throw error
        }
        defer { closedir(directory) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 { throw Errno.current }
                break
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
