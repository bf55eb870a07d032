import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real gpsd replaying a capture, started through `gpsfake` on a free
/// loopback port; stopping it kills gpsfake and its gpsd by pid and removes
/// the shared memory and control socket they leave behind (DESIGN §6).
///
/// `gpsfake -1 -p -q -P PORT LOG` starts gpsd, attaches its own watching
/// client, waits 1.4 s, then feeds the log once and exits. Outside clients
/// must connect and send ?WATCH within that window: start them as soon as
/// `start` returns (it returns once gpsd listens).
public final class GPSFake: @unchecked Sendable {
    // @unchecked: all stored properties are immutable or thread-safe (TestProcess).

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: UInt16
    public let logPath: String
    public let process: TestProcess
    /// gpsfake's TMPDIR, where it puts gpsd's control socket.
    private let temporaryDirectory: URL
    /// Our end of a gated gpsfake's stdin (see `release`).
    private let gate: Int32?

    /// Starts gpsfake on `port` (or a free one, retried if taken meanwhile)
    /// and waits, bounded, until its gpsd accepts connections.
    /// `cycle` is gpsfake's `-c` delay per sentence; nil replays at full speed.
    /// `loop` replays the log over and over (no `-1`) until `stop()`.
    /// `gated` holds the first sentence back until `release()`, so clients
    /// can be sure to see the replay from its very start, whatever the load.
    /// `launcher` runs a gated gpsfake through another program, e.g. into a
    /// Debian 13 root (`TrixieRoot`); `logPath` is then the path there.
    public static func start(
        log logPath: String, port: UInt16? = nil, cycle: Double? = nil, loop: Bool = false, gated: Bool = false,
        launcher: [String] = [], listenTimeout: Double = 15
    ) throws -> GPSFake {
        var lastError = StartError(description: "gpsfake did not start")
        for _ in 0..<(port == nil ? 3 : 1) {
            let chosen = port ?? FreePort.loopbackTCP()
            do {
                return try GPSFake(
                    logPath: logPath, port: chosen, cycle: cycle, loop: loop, gated: gated || !launcher.isEmpty,
                    launcher: launcher, listenTimeout: listenTimeout)
            } catch let error as StartError {
                lastError = error
            }
        }
        throw lastError
    }

    private init(
        logPath: String, port: UInt16, cycle: Double?, loop: Bool, gated: Bool, launcher: [String],
        listenTimeout: Double
    ) throws {
        self.port = port
        self.logPath = logPath
        temporaryDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-gpsfake-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: temporaryDirectory, withIntermediateDirectories: true)
        var arguments = (loop ? [] : ["-1"]) + ["-p", "-q", "-P", String(port)]
        if let cycle { arguments += ["-c", String(cycle)] }
        // Gated, gpsfake's one fixed wait before it feeds (1.4 s "to get
        // ready", gpsd 3.22 and 3.25 alike) ends with a read of a line from stdin:
        // a socket of ours, written by `release` (a socket, not a pipe: a
        // send after gpsfake exits fails with EPIPE instead of raising SIGPIPE).
        var ends: [Int32] = [-1, -1]
        if gated {
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else {
                try? FileManager.default.removeItem(at: temporaryDirectory)
                throw StartError(description: "socketpair: \(String(cString: strerror(errno)))")
            }
        }
        arguments.append(logPath)
        let gating = gated ? ["--gated"] : []
        do {
            if let program = launcher.first {
                // Its own /tmp there: the host's temporary directory is not in the root.
                process = try TestProcess(
                    program,
                    Array(launcher.dropFirst()) + ["/usr/bin/python3", "-c", GPSFake.startScript] + gating
                        + ["/usr/bin/gpsfake"] + arguments, passing: [0: ends[1]])
            } else {
                let gpsfake = TestProcess.which("gpsfake") ?? "/usr/bin/gpsfake"
                process = try TestProcess(
                    "/usr/bin/python3", ["-c", GPSFake.startScript] + gating + [gpsfake] + arguments,
                    environment: ["TMPDIR": temporaryDirectory.path], passing: gated ? [0: ends[1]] : [:])
            }
        } catch {
            if gated { close(ends[0]) }
            if gated { close(ends[1]) }
            try? FileManager.default.removeItem(at: temporaryDirectory)
            throw StartError(description: "\(error)")
        }
        if gated { close(ends[1]) }
        gate = gated ? ends[0] : nil
        if !waitUntilListening(timeout: listenTimeout) {
            let stderr = process.stderr()
            stop()
            throw StartError(description: "gpsfake on port \(port) never listened: \(stderr)")
        }
    }

    deinit {
        stop()
        if let gate { close(gate) }
    }

    /// Polls a TCP connect to the port until it succeeds, gpsfake exits, or the timeout.
    public func waitUntilListening(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if FreePort.isListening(port) { return true }
            if !process.isRunning { return false }
            usleep(10_000)
        }
        return false
    }

    /// gpsfake's gpsd child, if it is (still) running.
    public var gpsdPID: pid_t? {
        TestProcess.children(of: process.pid).first { pid in
            TestProcess.procStat(pid).map { $0.command == "gpsd" && $0.state != "Z" } ?? false
        }
    }

    /// Waits for gpsfake to finish the replay (it exits 0 at the end of the log).
    @discardableResult
    public func waitForExit(timeout: Double) -> Int32? {
        process.waitForExit(timeout: timeout)
    }

    /// gpsfake (the first argument after an optional `--gated`) run with
    /// two changes. Its start waits for gpsd's TCP listener: gpsfake itself
    /// waits only for gpsd's control socket, which gpsd makes before it
    /// listens, and then connects its own client at once; on a loaded
    /// machine that is refused and gpsfake exits ("socket error [Errno 111]").
    /// Gated, its 1.4 s wait before feeding (gpsd sets the device up then,
    /// flushing what arrives meanwhile) is followed by a read of a line from
    /// stdin, announced on stderr (`atGate`).
    public static let startScript = """
        import runpy, socket, sys, time
        import gps.fake
        wait = time.sleep
        spawn = gps.fake.TestSession.spawn
        def listening_spawn(session):
            spawn(session)
            while session.daemon and session.daemon.is_alive():
                try:
                    socket.create_connection(("127.0.0.1", session.port), timeout=5).close()
                    return
                except OSError:
                    wait(0.01)
        gps.fake.TestSession.spawn = listening_spawn
        def gate(seconds):
            wait(seconds)
            if seconds != 1.4:
                return
            sys.stderr.write("gpsfake: at the gate\\n")
            sys.stderr.flush()
            sys.stdin.readline()
        arguments = sys.argv[1:]
        if arguments[0] == "--gated":
            time.sleep = gate
            arguments = arguments[1:]
        sys.argv = arguments
        runpy.run_path(arguments[0], run_name="__main__")
        """

    /// Whether a gated gpsfake waits at its gate (its gpsd and own client are up).
    public var atGate: Bool { process.stderr().contains("gpsfake: at the gate") }

    /// Lets a gated gpsfake feed.
    public func release() {
        guard let gate else { return }
        _ = [UInt8(10)].withUnsafeBytes { send(gate, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }
    }

    /// Kills only the gpsd child, as if gpsd crashed: clients see EOF.
    public func killGPSD() {
        if let pid = gpsdPID { TestProcess.killAndWait(pid) }
    }

    /// Kills gpsd and gpsfake by pid (gpsfake alone would leave gpsd
    /// running), then removes their shared memory and control socket. Idempotent.
    public func stop() {
        let gpsd = TestProcess.descendants(of: process.pid)
        process.kill()
        for pid in gpsd { TestProcess.killAndWait(pid) }
        SharedMemory.removeGPSDSegments(port: port)
        try? FileManager.default.removeItem(at: temporaryDirectory)
    }

    // MARK: - Captures

    /// The captures bundled with the package (Tests/Fixtures/gpsd-logs).
    public static var bundledLogDirectory: URL {
        packageRoot.appendingPathComponent("Tests/Fixtures/gpsd-logs")
    }

    /// The full shared set: `AKLOC_GPSD_LOGS` if set, else the first
    /// `shared/gpsd-logs` beside the package root or one of its ancestors
    /// (`../shared/gpsd-logs` for a checkout next to `shared/`, which also
    /// finds it from a git worktree one level deeper). Nil when absent.
    public static var sharedLogDirectory: URL? {
        let fileManager = FileManager.default
        if let override = ProcessInfo.processInfo.environment["AKLOC_GPSD_LOGS"], !override.isEmpty {
            return fileManager.fileExists(atPath: override) ? URL(fileURLWithPath: override) : nil
        }
        var directory = packageRoot
        for _ in 0..<3 {
            directory = directory.deletingLastPathComponent()
            let candidate = directory.appendingPathComponent("shared/gpsd-logs")
            if fileManager.fileExists(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// The path of a bundled capture by name, e.g. `bundledLog("haicom-305N")`.
    public static func bundledLog(_ name: String) -> String {
        bundledLogDirectory.appendingPathComponent(name.hasSuffix(".log") ? name : "\(name).log").path
    }

    /// `*.log` files in `directory`, sorted by name.
    public static func logs(in directory: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".log") }.sorted().map { directory.appendingPathComponent($0) }
    }

    public static var packageRoot: URL {
        // Tests/AklocTestSupport/GPSFake.swift -> package root.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }
}

/// `gpspipe -w 127.0.0.1:PORT`: a second, independent client of the same
/// gpsd, whose output is the reference the tests compare against.
public final class GPSPipe: @unchecked Sendable {
    // @unchecked: the only stored property is a TestProcess.
    public let process: TestProcess

    /// `launcher` runs it through another program (as `GPSFake.start`'s).
    public init(port: UInt16, launcher: [String] = []) throws {
        if let program = launcher.first {
            process = try TestProcess(
                program, Array(launcher.dropFirst()) + ["/usr/bin/gpspipe", "-w", "127.0.0.1:\(port)"])
        } else {
            process = try TestProcess("gpspipe", ["-w", "127.0.0.1:\(port)"])
        }
    }

    deinit {
        process.kill()
    }

    /// Waits (bounded) until gpsd has answered gpspipe's ?WATCH: from then
    /// on gpspipe gets every report. False on timeout or if it exited.
    public func waitUntilWatching(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !process.stdout().contains("\"class\":\"WATCH\"") {
            guard Date() < deadline, process.isRunning else { return false }
            usleep(10_000)
        }
        return true
    }

    /// Waits for gpspipe to exit (it does when gpsd closes), bounded.
    @discardableResult
    public func waitForExit(timeout: Double) -> Int32? {
        process.waitForExit(timeout: timeout)
    }

    public func stop() {
        process.kill()
    }

    /// Every JSON object gpspipe printed, in order.
    public func objects() -> [[String: Any]] {
        process.stdout().split(whereSeparator: \.isNewline).compactMap { line in
            guard let data = line.data(using: .utf8) else { return nil }
            return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        }
    }

    /// The TPV objects only.
    public func tpvs() -> [[String: Any]] {
        objects().filter { $0["class"] as? String == "TPV" }
    }
}

/// Whether gpsfake/gpspipe are installed, and what a test should do if not:
/// with `AKLOC_REQUIRE_TOOLS=1` (make test, CI) a missing tool is a failure,
/// otherwise the test is skipped with a message.
public enum GPSDTools {
    public static let names = ["gpsfake", "gpspipe", "gpsd"]

    public static var missing: [String] { names.filter { TestProcess.which($0) == nil && !inSbin($0) } }

    public static var available: Bool { missing.isEmpty }

    public static var required: Bool { ProcessInfo.processInfo.environment["AKLOC_REQUIRE_TOOLS"] == "1" }

    /// Run the test when the tools are there, or when they are required (so it fails).
    public static var shouldRun: Bool { available || required }

    public static var missingMessage: String {
        "missing \(missing.joined(separator: ", ")) (Debian: apt install gpsd gpsd-tools gpsd-clients python3-gps)"
    }

    private static func inSbin(_ name: String) -> Bool {
        ["/usr/sbin/", "/sbin/"].contains { access($0 + name, X_OK) == 0 }
    }
}

/// The SysV shared-memory segments gpsd 3.22 creates and leaves behind.
public enum SharedMemory {
    public struct Segment: Hashable, Sendable {
        public var key: Int32
        public var id: Int32
        public var attached: Int
    }

    /// gpsfake gives each gpsd the key 0x4770PPPP (PPPP = port in hex).
    public static func gpsdKey(port: UInt16) -> Int32 { Int32(bitPattern: 0x4770_0000 | UInt32(port)) }

    /// gpsd's NTP segments ("NTP" + unit: 0x4E545030 + unit), made only when
    /// running as root. The trixie tests' gpsd left units 8 to 11 (keys NTP8,
    /// NTP9, NTP:, NTP;), beyond the NTP0..NTP7 this list had.
    public static let ntpKeys: [Int32] = (0..<16).map { 0x4E54_5030 + $0 }

    /// Every segment on the system, from /proc/sysvipc/shm.
    public static func segments() -> [Segment] {
        guard let text = try? String(contentsOfFile: "/proc/sysvipc/shm", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 6, let key = Int64(fields[0]), let id = Int32(fields[1]),
                let attached = Int(fields[6])
            else { return nil }
            return Segment(key: Int32(truncatingIfNeeded: key), id: id, attached: attached)
        }
    }

    /// Removes the port's segment and (as root) the NTP ones, each only when
    /// no process is attached: the NTP keys are shared by every gpsd on the
    /// machine, and a parallel test's live gpsd must keep its segments.
    /// Returns the keys removed.
    @discardableResult
    public static func removeGPSDSegments(port: UInt16) -> [Int32] {
        var keys = [gpsdKey(port: port)]
        if geteuid() == 0 { keys += ntpKeys }
        return keys.filter(removeIfUnattached)
    }

    private static func removeIfUnattached(_ key: Int32) -> Bool {
        let id = shmget(key_t(key), 0, 0)
        guard id >= 0 else { return false }
        var info = shmid_ds()
        guard shmctl(id, IPC_STAT, &info) == 0, info.shm_nattch == 0 else { return false }
        return shmctl(id, IPC_RMID, nil) == 0
    }
}
