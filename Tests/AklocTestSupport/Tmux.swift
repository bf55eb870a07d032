import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A private tmux server (its own `-L` socket, no config) with one session
/// of a given size: a real terminal emulator to drive a full-screen
/// program in and read back (`capture-pane`). `stop()` kills the server by
/// its pid.
public final class Tmux: @unchecked Sendable {
    // @unchecked: every stored property is immutable.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public static var available: Bool { TestProcess.which("tmux") != nil }

    public let socketName: String
    public let session = "akloc"
    public let serverPID: pid_t

    /// Starts the server with a session running `sh` in a `columns` × `rows` window.
    public init(columns: Int = 80, rows: Int = 24, environment: [String: String] = [:]) throws {
        socketName = "akloc-test-\(UUID().uuidString.prefix(8))"
        var arguments = ["new-session", "-d", "-x", String(columns), "-y", String(rows), "-s", session]
        for (key, value) in environment.sorted(by: { $0.key < $1.key }) { arguments += ["-e", "\(key)=\(value)"] }
        _ = try Tmux.run(socketName, arguments + ["sh"])
        guard let pid = pid_t(try Tmux.run(socketName, ["display-message", "-p", "#{pid}"]).trimmed) else {
            throw Failure(description: "tmux gave no server pid")
        }
        serverPID = pid
    }

    deinit { stop() }

    @discardableResult
    static func run(_ socketName: String, _ arguments: [String]) throws -> String {
        let process = try TestProcess("tmux", ["-L", socketName, "-f", "/dev/null"] + arguments)
        defer { try? FileManager.default.removeItem(at: process.directory) }
        guard process.waitForExit(timeout: 10) == 0 else {
            throw Failure(description: "tmux \(arguments.joined(separator: " ")): \(process.stderr())")
        }
        return process.stdout()
    }

    /// Types `text` into the pane, then Enter when `enter`.
    public func type(_ text: String, enter: Bool = true) throws {
        try Tmux.run(socketName, ["send-keys", "-t", session, "-l", text])
        if enter { try Tmux.run(socketName, ["send-keys", "-t", session, "Enter"]) }
    }

    /// Sends a key by tmux's name for it (`C-c`).
    public func key(_ name: String) throws {
        try Tmux.run(socketName, ["send-keys", "-t", session, name])
    }

    /// The pane's visible text, one string per row.
    public func capture() throws -> [String] {
        // Each row ends in a newline, the last one too.
        var text = try Tmux.run(socketName, ["capture-pane", "-p", "-t", session])
        if text.hasSuffix("\n") { text.removeLast() }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// A tmux format of the pane, e.g. `#{alternate_on}`.
    public func format(_ format: String) throws -> String {
        try Tmux.run(socketName, ["display-message", "-p", "-t", session, format]).trimmed
    }

    /// Polls the pane until `condition` holds on its text, bounded by `timeout`.
    public func waitFor(timeout: Double, _ condition: ([String]) -> Bool) throws -> [String]? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let lines = try capture()
            if condition(lines) { return lines }
            usleep(50_000)
        }
        return nil
    }

    /// Kills the server (and with it the pane's processes) by its pid. Idempotent.
    public func stop() {
        // kill-server hangs up the panes' programs first, as closing a terminal does.
        if !TestProcess.isDead(serverPID) { _ = try? Tmux.run(socketName, ["kill-server"]) }
        if !TestProcess.isDead(serverPID) { TestProcess.killAndWait(serverPID) }
        try? FileManager.default.removeItem(atPath: "/tmp/tmux-\(getuid())/\(socketName)")
    }
}

extension String {
    fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
