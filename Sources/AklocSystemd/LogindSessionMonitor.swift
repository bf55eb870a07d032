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
/// runtime files) watched through a `FileDescriptor` on the daemon's queue
/// (its `EventPoller`, as every other descriptor), so the daemon sleeps
/// between changes.
public final class LogindSessionMonitor: SessionMonitor {
    public let tracksSessions: Bool

    private struct State {
        /// Last known answer per watched uid.
        var known: [UInt32: Bool] = [:]
        var watched: WatchedHandle?
        var onChange: (@Sendable ([SessionChange]) -> Void)?
    }

    /// An `sd_login_monitor *`. Only touched on the monitor's queue, or in
    /// the dispatch source's cancel handler after that queue is done with it.
    private struct MonitorHandle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// The monitor's descriptor with the queue it is watched on; touched
    /// only on that queue (start and stop hop onto it).
    private struct WatchedHandle: @unchecked Sendable {
        let descriptor: FileDescriptor
        let queue: DispatchQueue
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
        // The descriptor belongs to the monitor: closing it is unref'ing
        // the monitor, once nothing watches it.
        let watched = WatchedHandle(
            descriptor: FileDescriptor(adopting: fd) { _ in sd_login_monitor_unref(handle.pointer) }, queue: queue)
        state.withLock {
            $0.watched = watched
            $0.onChange = onChange
        }
        // Watched on the queue (a caller may be elsewhere); a change that
        // arrives first leaves the descriptor readable for the watch.
        queue.async { [weak self] in
            guard !watched.descriptor.isClosing else { return }
            _ = watched.descriptor.watch(.readable, on: queue) { self?.wake(handle) }
        }
    }

    public func stop() {
        let watched = state.withLock { state -> WatchedHandle? in
            let watched = state.watched
            state.watched = nil
            state.onChange = nil
            return watched
        }
        // After the watch was made, on the same serial queue.
        if let watched { watched.queue.async { watched.descriptor.close() } }
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
        guard let info = try? FileSystem.status(path) else { return false }
        return FileSystem.isDirectory(info)
    }
}
