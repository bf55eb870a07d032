import AklocPosix
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process for integration tests: spawned in its own process group,
/// stdout and stderr captured to files, killed (with its group) and reaped
/// when the test is done or the object goes away.
///
/// posix_spawn is used instead of Foundation's `Process` so the process group
/// is ours to set and the pid is ours to signal and reap.
public final class TestProcess: @unchecked Sendable {
    // @unchecked: `pid` and the paths are immutable; `exitStatus` is guarded by `lock`.

    public struct LaunchError: Error, CustomStringConvertible {
        public var executable: String
        public var code: Int32
        public var description: String { "cannot start \(executable): \(String(cString: strerror(code)))" }
    }

    public let executable: String
    public let arguments: [String]
    public let pid: pid_t
    /// The directory holding stdout/stderr captures; removed on deinit.
    public let directory: URL
    public var stdoutPath: String { directory.appendingPathComponent("stdout").path }
    public var stderrPath: String { directory.appendingPathComponent("stderr").path }

    private let lock = NSLock()
    private var exitStatus: Int32?

    /// Starts `executable` (an absolute path, or a name looked up in PATH).
    /// `environment` entries are added to (or replace) this process's
    /// environment, and the variables named in `removing` are left out.
    /// `passing` maps a descriptor number in the child to one of ours, which is
    /// duplicated there (e.g. `[3: socketEnd]`).
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], removing: [String] = [],
        passing: [Int32: Int32] = [:]
    ) throws {
        guard let path = TestProcess.which(executable) else {
            throw LaunchError(executable: executable, code: ENOENT)
        }
        self.executable = path
        self.arguments = arguments
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-proc-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)

        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        for key in removing { env[key] = nil }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(
            &actions, 1, directory.appendingPathComponent("stdout").path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(
            &actions, 2, directory.appendingPathComponent("stderr").path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        for (childFD, parentFD) in passing.sorted(by: { $0.key < $1.key }) {
            posix_spawn_file_actions_adddup2(&actions, parentFD, childFD)
        }
        // Tests run side by side in one process, and many of their sockets
        // and pipes are not close-on-exec: a child that inherited another
        // test's connection keeps it open after that test closes it (the
        // peer never sees the end), or holds its port after it exits.
        _ = TestProcess.closeFrom(&actions, max(2, passing.keys.max() ?? 2) + 1)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Own process group, so kill(-pid) reaches everything it forks;
        // default signal dispositions and an empty mask, whatever the test runner set.
        SignalSet.all.withUnsafePointer { _ = posix_spawnattr_setsigdefault(&attributes, $0) }
        SignalSet().withUnsafePointer { _ = posix_spawnattr_setsigmask(&attributes, $0) }
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var child: pid_t = 0
        let status = posix_spawn(&child, path, &actions, &attributes, argv, envp)
        guard status == 0 else {
            try? FileManager.default.removeItem(at: directory)
            throw LaunchError(executable: path, code: status)
        }
        pid = child
    }

    /// glibc's posix_spawn_file_actions_addclosefrom_np (2.34 and later),
    /// which Swift's Glibc module does not declare.
    static let closeFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
            preconditionFailure("glibc without posix_spawn_file_actions_addclosefrom_np (2.34 or later needed)")
        }
        return unsafeBitCast(
            symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    deinit {
        kill()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Whether the process has not exited yet (reaping it if it has).
    public var isRunning: Bool { poll() == nil }

    /// The wait status once exited (see `exitCode`), nil while running.
    public var status: Int32? { poll() }

    /// The exit code, or 128+signal for a process killed by a signal.
    public var exitCode: Int32? {
        guard let status = poll() else { return nil }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// Waits up to `timeout` seconds for exit; returns the exit code, or nil on timeout.
    @discardableResult
    public func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while poll() == nil {
            if Date() > deadline { return nil }
            usleep(5_000)
        }
        return exitCode
    }

    /// Sends `signal` to the process only.
    public func signal(_ signal: Int32) {
        guard isRunning else { return }
        try? Signal(rawValue: signal).send(to: pid)
    }

    /// SIGKILLs the whole process group and the process, then reaps it.
    public func kill() {
        if isRunning {
            try? Signal.kill.send(to: -pid)
            try? Signal.kill.send(to: pid)
        }
        waitForExit(timeout: 10)
    }

    public func stdout() -> String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    public func stderr() -> String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    private func poll() -> Int32? {
        lock.lock()
        defer { lock.unlock() }
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid {
            exitStatus = status
        } else if result < 0 && errno == ECHILD {
            exitStatus = -1
        }
        return exitStatus
    }

    // MARK: - Helpers

    /// The absolute path of `name` in PATH (or `name` itself if it has a slash).
    public static func which(_ name: String) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// The pids whose parent is `parent`, read from /proc/*/stat.
    public static func children(of parent: pid_t) -> [pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), let stat = procStat(pid), stat.parent == parent else { return nil }
            return pid
        }
    }

    /// All descendants of `root`, deepest last.
    public static func descendants(of root: pid_t) -> [pid_t] {
        var result: [pid_t] = []
        var queue = [root]
        while let next = queue.popLast() {
            let kids = children(of: next)
            result += kids
            queue += kids
        }
        return result
    }

    /// (command name, state letter, parent pid) from /proc/PID/stat, nil if gone.
    public static func procStat(_ pid: pid_t) -> (command: String, state: Character, parent: pid_t)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")")
        else { return nil }
        let command = String(text[text.index(after: open)..<close])
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 2, let state = fields[0].first, let parent = pid_t(fields[1]) else { return nil }
        return (command, state, parent)
    }

    /// Whether `pid` is gone or a zombie (dead, awaiting its parent).
    public static func isDead(_ pid: pid_t) -> Bool {
        guard let stat = procStat(pid) else { return true }
        return stat.state == "Z" || stat.state == "X"
    }

    /// SIGKILLs `pid` (not our child) and waits up to `timeout` s for it to die.
    @discardableResult
    public static func killAndWait(_ pid: pid_t, timeout: Double = 10) -> Bool {
        try? Signal.kill.send(to: pid)
        let deadline = Date().addingTimeInterval(timeout)
        while !isDead(pid) {
            if Date() > deadline { return false }
            usleep(5_000)
        }
        return true
    }
}
