import AklocPosix
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Small POSIX helpers for the harness: the monotonic clock, sockets, /proc.
enum Posix {
    /// CLOCK_MONOTONIC in nanoseconds: every receive timestamp of a run comes from it.
    static func monotonicNanos() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    static func setNonBlocking(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    /// A blocking connect to a Unix stream socket; the descriptor, or nil.
    static func connectUnix(_ path: String) -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        guard (try? UnixSocketAddress(path: path).connect(fd)) != nil else {
            close(fd)
            return nil
        }
        return fd
    }

    /// A blocking connect to 127.0.0.1:port; the descriptor, or nil.
    static func connectLoopback(port: UInt16) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            return nil
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    /// A listening Unix stream socket at `path` (replacing a stale file).
    static func listenUnix(_ path: String) -> Int32? {
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        guard (try? UnixSocketAddress(path: path).bind(fd)) != nil, listen(fd, 4096) == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Writes all of `text`, blocking.
    @discardableResult
    static func writeAll(_ fd: Int32, _ text: String) -> Bool {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += count
        }
        return true
    }

    /// Raises the soft RLIMIT_NOFILE to `wanted` (bounded by the hard limit,
    /// which root may raise too). Returns the soft limit in effect.
    @discardableResult
    static func raiseFileLimit(to wanted: UInt64) -> UInt64 {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_max < wanted, geteuid() == 0 {
            var raised = limit
            raised.rlim_max = rlim_t(wanted)
            raised.rlim_cur = rlim_t(wanted)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return UInt64(wanted) }
        }
        limit.rlim_cur = min(limit.rlim_max, rlim_t(wanted))
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return UInt64(limit.rlim_cur)
    }

    /// Runs `body` with the soft RLIMIT_NOFILE set to `soft` (children spawned
    /// inside inherit it), then restores the previous soft limit.
    static func withSoftFileLimit<T>(_ soft: UInt64, _ body: () throws -> T) rethrows -> T {
        var saved = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved)
        var lowered = saved
        lowered.rlim_cur = min(saved.rlim_max, rlim_t(soft))
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered)
        defer { setrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved) }
        return try body()
    }

    /// The numeric fields of /proc/PID/status that end in "kB" or are counts, by name.
    static func procStatus(_ path: String) -> [String: Int] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [:] }
        var fields: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" })
            if let first = value.first, let number = Int(first) {
                fields[String(line[..<colon])] = number
            }
        }
        return fields
    }

    /// Voluntary + nonvoluntary context switches of every thread of `pid`, by thread id.
    static func contextSwitches(_ pid: pid_t) -> [String: Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var switches: [String: Int] = [:]
        for task in tasks {
            let fields = procStatus("/proc/\(pid)/task/\(task)/status")
            switches[task] = (fields["voluntary_ctxt_switches"] ?? 0) + (fields["nonvoluntary_ctxt_switches"] ?? 0)
        }
        return switches
    }

    /// Nanoseconds on a CPU, summed over the live threads of `pid` (/proc/PID/task/*/schedstat).
    static func cpuNanos(_ pid: pid_t) -> Int64 {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { sum, task in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8)) ?? ""
            return sum + (text.split(separator: " ").first.flatMap { Int64($0) } ?? 0)
        }
    }

    static func threadCount(_ pid: pid_t) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).count
    }

    static func sleep(seconds: Double) {
        usleep(useconds_t(seconds * 1e6))
    }
}
