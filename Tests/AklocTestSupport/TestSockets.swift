import AklocPosix
import Glibc

/// Small socket helpers for tests; production code uses AklocPosix's socket types.
public enum TestSockets {
    public static func temporaryDirectory() -> String {
        var template = Array("/tmp/akloc-sys-test.XXXXXX".utf8CString)
        let path = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(path != nil, "mkdtemp failed")
        return String(cString: path!)
    }

    public static func unixSocket(type: Int32, path: String?, listen backlog: Int32? = nil) -> Int32 {
        let fd = socket(AF_UNIX, type, 0)
        precondition(fd >= 0, "socket failed")
        if let path {
            do {
                try UnixSocketAddress(path: path).bind(fd)
            } catch {
                preconditionFailure("bind \(path): \(error)")
            }
        }
        if let backlog {
            precondition(listen(fd, backlog) == 0)
        }
        return fd
    }

    /// One datagram, or nil if none arrives within `timeoutMilliseconds`.
    public static func receive(_ fd: Int32, timeoutMilliseconds: Int32 = 1000) -> String? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, timeoutMilliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    public static func pipe() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        precondition(Glibc.pipe(&fds) == 0)
        return (fds[0], fds[1])
    }

    /// Everything readable from `fd` without blocking.
    public static func drain(_ fd: Int32) -> String {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 0) == 1 else { break }
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { break }
            result += buffer[0..<count]
        }
        return String(decoding: result, as: UTF8.self)
    }
}

/// Sets environment variables for the duration of `body` and restores them.
@discardableResult
public func withEnvironment<T>(_ values: [String: String?], _ body: () throws -> T) rethrows -> T {
    var saved: [String: String?] = [:]
    for (name, value) in values {
        saved[name] = getenv(name).map { String(cString: $0) }
        if let value { setenv(name, value, 1) } else { unsetenv(name) }
    }
    defer {
        for (name, value) in saved {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
    }
    return try body()
}

/// Starts `arguments` (absolute path first) with output discarded.
public func spawnQuietly(_ arguments: [String]) -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    // As TestProcess: another test's socket inherited here would outlive its close.
    _ = TestProcess.closeFrom(&actions, 3)
    let argv = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
    precondition(result == 0, "posix_spawn \(arguments[0]) failed: \(result)")
    return pid
}

/// Connects to a Unix stream socket, retrying until it exists (bounded).
public func connectWhenListening(_ path: String, timeoutSeconds: Double = 10) -> Int32? {
    var waited = 0.0
    while waited < timeoutSeconds {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard let address = try? UnixSocketAddress(path: path) else { return nil }
        if (try? address.connect(fd)) != nil { return fd }
        close(fd)
        usleep(20_000)
        waited += 0.02
    }
    return nil
}
