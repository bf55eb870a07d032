import Dispatch
import Glibc

/// Starting a helper program and not waiting for it (`akloc map --open`
/// runs xdg-open, which returns once the browser is asked).
public enum ChildProcess {
    /// Runs `arguments[0]` (looked up in PATH) with the rest as its
    /// arguments; it is reaped in the background when it exits.
    public static func spawnDetached(_ arguments: [String]) throws(Errno) {
        precondition(!arguments.isEmpty)
        var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        cArguments.append(nil)
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, arguments[0], nil, nil, cArguments, environ)
        guard result == 0 else { throw Errno(rawValue: result) }
        let child = pid
        DispatchQueue.global().async {
            var status: Int32 = 0
            _ = try? Syscall.retryingOnEINTR { waitpid(child, &status, 0) }
        }
    }
}
