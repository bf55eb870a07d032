import Glibc

extension ProcessEnvironment {
    /// The running executable's absolute path (`/proc/self/exe`), or nil
    /// where /proc is not mounted.
    public static func executablePath() -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        guard
            let count = try? Syscall.retryingOnEINTR({
                buffer.withUnsafeMutableBufferPointer { pointer in
                    pointer.withMemoryRebound(to: CChar.self) {
                        readlink("/proc/self/exe", $0.baseAddress!, $0.count - 1)
                    }
                }
            }), count > 0
        else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }
}
