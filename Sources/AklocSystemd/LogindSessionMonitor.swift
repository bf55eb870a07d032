import AklocPosix
import CSystemd
import Dispatch
import Glibc
import Synchronization

/// `SessionMonitor` over sd-login: a uid is active when
/// `sd_uid_get_state(3)` says "active" (it has a session in the foreground
/// of a seat, or an active remote session).
///
/// Changes are noticed through `sd_login_monitor` (inotify on logind's
/// runtime files) watched by a dispatch source on the daemon's queue, so the
/// daemon sleeps between changes.
public final class LogindSessionMonitor: SessionMonitor {
    public let tracksSessions: Bool

    private struct State {
        /// Last known answer per watched uid.
        var known: [UInt32: Bool] = [:]
        var source: SourceHandle?
        var onChange: (@Sendable ([SessionChange]) -> Void)?
    }

    /// An `sd_login_monitor *`. Only touched on the monitor's queue, or in
    /// the dispatch source's cancel handler after that queue is done with it.
    private struct MonitorHandle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// Dispatch sources are thread-safe (libdispatch documents cancel and
    /// resume from any thread); the Swift overlay just lacks `Sendable`.
    private struct SourceHandle: @unchecked Sendable {
        let source: any DispatchSourceRead
    }

    private let state = Mutex(State())

    /// `runtimeDirectory` is systemd's (`/run/systemd`); tests point it
    /// elsewhere. logind counts as present when it has both `users/` (logind
    /// writes one file per uid there) and `system/` (systemd is PID 1, which
    /// logind needs). Without logind, `sd_uid_get_state` still answers,
    /// "offline" for everyone, which would silence every `whenInUse` client;
    /// container images often ship an empty `users/` left from their build,
    /// hence the second check.
    public init(runtimeDirectory: String = "/run/systemd") {
        tracksSessions = Self.isDirectory(runtimeDirectory + "/users") && Self.isDirectory(runtimeDirectory + "/system")
    }

    deinit {
        stop()
    }

    public func isActive(uid: UInt32) -> Bool {
        guard tracksSessions else { return true }
        let active = Self.queryActive(uid: uid)
        state.withLock { $0.known[uid] = active }
        return active
    }

    public func forget(uid: UInt32) {
        _ = state.withLock { $0.known.removeValue(forKey: uid) }
    }

    public func start(on queue: DispatchQueue, onChange: @escaping @Sendable ([SessionChange]) -> Void) throws(Errno) {
        guard tracksSessions else { return }
        stop()
        var pointer: OpaquePointer?
        try Syscall.retryingNegativeErrnoOnEINTR { sd_login_monitor_new("uid", &pointer) }
        guard let pointer else { throw Errno.invalidArgument }
        let handle = MonitorHandle(pointer: pointer)
        let fd = sd_login_monitor_get_fd(pointer)
        guard fd >= 0 else {
            sd_login_monitor_unref(pointer)
            throw Errno(rawValue: -fd)
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.wake(handle) }
        // The descriptor belongs to the monitor; it may only be closed once
        // dispatch has stopped watching it.
        source.setCancelHandler { sd_login_monitor_unref(handle.pointer) }
        // Resumed before being handed to the lock: a change that arrives
        // first finds no callback yet and is picked up by the next wake.
        source.resume()
        let sourceHandle = SourceHandle(source: source)
        state.withLock {
            $0.source = sourceHandle
            $0.onChange = onChange
        }
    }

    public func stop() {
        let handle = state.withLock { state -> SourceHandle? in
            let source = state.source
            state.source = nil
            state.onChange = nil
            return source
        }
        handle?.source.cancel()
    }

    private func wake(_ handle: MonitorHandle) {
        // Flushing re-arms the inotify descriptor; without it the source
        // would fire again at once.
        sd_login_monitor_flush(handle.pointer)
        let (uids, onChange) = state.withLock { ($0.known.keys.sorted(), $0.onChange) }
        guard let onChange else { return }
        let answers = uids.map { ($0, Self.queryActive(uid: $0)) }
        let changes = state.withLock { state -> [SessionChange] in
            var changes: [SessionChange] = []
            for (uid, active) in answers {
                // A uid forgotten meanwhile is no longer of interest.
                guard let previous = state.known[uid], previous != active else { continue }
                state.known[uid] = active
                changes.append(SessionChange(uid: uid, active: active))
            }
            return changes
        }
        if !changes.isEmpty { onChange(changes) }
    }

    static func queryActive(uid: UInt32) -> Bool {
        var raw: UnsafeMutablePointer<CChar>?
        let result = sd_uid_get_state(uid, &raw)
        defer { free(raw) }
        guard result >= 0, let raw else { return false }
        return String(cString: raw) == "active"
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        guard (try? Syscall.retryingOnEINTR { stat(path, &info) }) != nil else { return false }
        return info.st_mode & S_IFMT == S_IFDIR
    }
}
