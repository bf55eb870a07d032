import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The Debian 13 (trixie) root of `scripts/trixie-root.sh`, entered by one
/// test: an overlay over the cached root (which stays untouched), with
/// /proc, /dev and the test's directories mounted in it, all inside a
/// private mount namespace held by one process. Nothing is mounted on the
/// host: the mounts end with the namespace, when `stop()` has ended every
/// process in it, whatever the test did; `stop()` then checks the host's
/// mount table holds nothing under the test's directory.
public final class TrixieRoot: @unchecked Sendable {
    // @unchecked: immutable after init but for TestProcess, which is thread-safe.

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The cached root `make test` made (`AKLOC_TRIXIE_ROOT`), nil when unset.
    public static var cached: String? {
        guard let path = ProcessInfo.processInfo.environment["AKLOC_TRIXIE_ROOT"], !path.isEmpty else { return nil }
        return path
    }

    /// Whether the trixie tests run: with a root, or (to fail) when tools are required.
    public static var shouldRun: Bool { cached != nil || GPSDTools.required }

    public let directory: URL
    public let merged: String
    private let holder: TestProcess

    /// Enters `root` with each `binds` host directory mounted read-only at
    /// its path in the root.
    public init(root: String, binds: [(host: String, inRoot: String)] = []) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-trixie-\(UUID().uuidString.prefix(8))")
        for name in ["upper", "work", "merged"] {
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        merged = directory.appendingPathComponent("merged").path
        let top = directory.path
        var script = """
            set -e
            mount -t overlay overlay -o lowerdir=\(root),upperdir=\(top)/upper,workdir=\(top)/work \(merged)
            mount -t proc proc \(merged)/proc
            mount --rbind /dev \(merged)/dev

            """
        for bind in binds {
            script += "mkdir -p \(merged)\(bind.inRoot)\n"
            script += "mount --bind \(bind.host) \(merged)\(bind.inRoot)\n"
            script += "mount -o remount,bind,ro \(merged)\(bind.inRoot)\n"
        }
        script += "echo ready\nexec sleep 2147483647\n"
        holder = try TestProcess("unshare", ["--mount", "--propagation", "private", "--", "sh", "-c", script])
        let deadline = Date().addingTimeInterval(30)
        while !holder.stdout().contains("ready") {
            guard holder.isRunning, Date() < deadline else {
                let why = holder.stderr()
                holder.kill()
                try? FileManager.default.removeItem(at: directory)
                throw Failure(description: "cannot enter the trixie root \(root): \(why)")
            }
            usleep(10_000)
        }
    }

    deinit { stop() }

    /// Prefix that runs a program in the root (as root, in its namespace).
    public var launcher: [String] {
        ["nsenter", "--target", String(holder.pid), "--mount", "--", "chroot", merged]
    }

    /// Runs `arguments` in the root to its end (killed at `timeout`).
    public func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 120) throws -> (
        code: Int32?, stdout: String, stderr: String
    ) {
        let process = try TestProcess(
            launcher[0], Array(launcher.dropFirst()) + arguments, environment: environment)
        defer { process.kill() }
        let code = process.waitForExit(timeout: timeout)
        return (code, process.stdout(), process.stderr())
    }

    /// Ends every process in the namespace (the holder last), so its mounts
    /// go with it, and removes the overlay's directories. Idempotent.
    public func stop() {
        guard FileManager.default.fileExists(atPath: directory.path) else { return }
        let namespace = Self.mountNamespace(of: holder.pid)
        if let namespace {
            for pid in Self.processes(in: namespace) where pid != holder.pid { TestProcess.killAndWait(pid) }
        }
        holder.kill()
        _ = holder.waitForExit(timeout: 10)
        try? FileManager.default.removeItem(at: directory)
    }

    /// The host's mounts under this root's directory (none, after `stop`).
    public var hostMounts: [String] {
        let table = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        return table.split(separator: "\n").map(String.init).filter { $0.contains(directory.path) }
    }

    static func mountNamespace(of pid: pid_t) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/ns/mnt")
    }

    static func processes(in namespace: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { mountNamespace(of: $0) == namespace }
    }
}
