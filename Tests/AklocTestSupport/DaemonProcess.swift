import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The real `aklocd` binary on a private socket, state directory and config
/// in a temporary folder, for integration tests. Stopped by PID and the folder
/// removed by `stop()` (and at deinit).
public final class DaemonProcess: @unchecked Sendable {
    public let directory: URL
    public let socketPath: String
    public let stateDirectory: String
    public let configPath: String
    public private(set) var process: TestProcess
    private let arguments: [String]
    private let environment: [String: String]
    private let launcher: [String]

    /// Starts aklocd reading gpsd at `gpsdPort` (nil: no `--gpsd`, the
    /// config's `[gpsd]` applies) with `config` as its config file text, and
    /// waits (bounded) until its socket accepts connections. `launcher` runs
    /// aklocd through another program, e.g. `["prlimit", "--nofile=256:4096", "--"]`.
    public init(
        gpsdPort: UInt16?, config: String = "", extraArguments: [String] = [], environment: [String: String] = [:],
        launcher: [String] = [], waitForSocket: Bool = true
    ) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-daemon-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // World-traversable, so clients running as other users can reach the socket.
        chmod(directory.path, 0o755)
        socketPath = directory.appendingPathComponent("akloc.sock").path
        stateDirectory = directory.appendingPathComponent("state").path
        configPath = directory.appendingPathComponent("akloc.conf").path
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        arguments =
            ["--socket", socketPath] + (gpsdPort.map { ["--gpsd", "127.0.0.1:\($0)"] } ?? [])
            + ["--state-dir", stateDirectory, "--config", configPath, "--log-level", "debug"] + extraArguments
        self.environment = environment
        self.launcher = launcher
        process = try Self.launch(launcher, arguments, environment)
        if waitForSocket { try waitUntilServing() }
    }

    deinit { stop() }

    /// What systemd hands a service. Other tests in the same process set
    /// some of these for a moment (setenv), so a daemon never inherits them:
    /// it gets exactly those its test passes in `environment`.
    public static let systemdVariables = [
        "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES",
        "JOURNAL_STREAM",
    ]

    /// aklocd, or `launcher` running it, without the systemd variables of
    /// this process that `environment` does not set.
    private static func launch(
        _ launcher: [String], _ arguments: [String], _ environment: [String: String]
    ) throws -> TestProcess {
        let removing = systemdVariables.filter { environment[$0] == nil }
        guard let program = launcher.first else {
            return try TestProcess(Binaries.aklocd, arguments, environment: environment, removing: removing)
        }
        return try TestProcess(
            program, Array(launcher.dropFirst()) + [Binaries.aklocd] + arguments, environment: environment,
            removing: removing)
    }

    /// Waits until a connection to the socket succeeds (the daemon is serving).
    public func waitUntilServing(timeout: Double = 15) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let client = try? SocketClient(path: socketPath) {
                _ = try? client.readLine(timeout: 5)
                return
            }
            guard process.isRunning else {
                throw SocketClient.Failure("aklocd exited with \(process.exitCode ?? -1): \(process.stderr())")
            }
            usleep(10_000)
        }
        throw SocketClient.Failure("aklocd did not serve \(socketPath) within \(timeout) s: \(process.stderr())")
    }

    /// Waits (bounded) until `status` says the gpsd source is connected.
    /// Every client hears `sourceConnected` when that happens; a test that
    /// asserts a client hears nothing else connects its clients after it.
    public func waitUntilSourceConnected(timeout: Double = 15) throws {
        let (client, _) = try connect()
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let reply = try client.request("status")
            let source = (reply["result"] as? [String: Any])?["source"] as? [String: Any]
            if source?["connected"] as? Bool == true { return }
            guard Date() < deadline else {
                throw SocketClient.Failure("aklocd's gpsd source did not connect within \(timeout) s: \(reply)")
            }
            // The handshake is gpsd's answer to a connect: poll status until it is in.
            usleep(20_000)
        }
    }

    /// A new client, past its `hello` (returned).
    public func connect() throws -> (SocketClient, hello: [String: Any]) {
        let client = try SocketClient.connect(path: socketPath)
        return (client, try client.readMessage())
    }

    /// Starts the same daemon again (same socket, state and config), e.g. after a kill.
    public func restart() throws {
        process.kill()
        process = try Self.launch(launcher, arguments, environment)
        try waitUntilServing()
    }

    /// SIGTERM and wait for the exit code (nil if it did not exit within `timeout`).
    public func terminate(timeout: Double = 10) -> Int32? {
        process.signal(SIGTERM)
        return process.waitForExit(timeout: timeout)
    }

    /// Resident memory of the daemon in KiB, from /proc.
    public var residentKiB: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.pid)/status", encoding: .utf8) else {
            return nil
        }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }

    public func stop() {
        process.kill()
        try? FileManager.default.removeItem(at: directory)
    }
}
