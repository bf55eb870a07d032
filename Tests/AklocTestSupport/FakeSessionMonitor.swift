import AklocPosix
import AklocSystemd
import Dispatch
import Synchronization

/// A `SessionMonitor` driven by hand, for tests of the daemon: `set(uid:active:)`
/// plays logind. Like the real monitor it reports changes only for uids it
/// was asked about, asynchronously on the queue given to `start`.
public final class FakeSessionMonitor: SessionMonitor {
    public let tracksSessions: Bool

    private struct State {
        var active: [UInt32: Bool] = [:]
        var watched: Set<UInt32> = []
        var queue: DispatchQueue?
        var onChange: (@Sendable ([SessionChange]) -> Void)?
    }

    private let state = Mutex(State())
    private let defaultActive: Bool

    /// `defaultActive` answers for uids never `set`.
    public init(tracksSessions: Bool = true, defaultActive: Bool = true) {
        self.tracksSessions = tracksSessions
        self.defaultActive = defaultActive
    }

    public func isActive(uid: UInt32) -> Bool {
        guard tracksSessions else { return true }
        return state.withLock {
            $0.watched.insert(uid)
            return $0.active[uid] ?? defaultActive
        }
    }

    public func forget(uid: UInt32) {
        _ = state.withLock { $0.watched.remove(uid) }
    }

    public func start(on queue: DispatchQueue, onChange: @escaping @Sendable ([SessionChange]) -> Void) throws(Errno) {
        state.withLock {
            $0.queue = queue
            $0.onChange = onChange
        }
    }

    public func stop() {
        state.withLock {
            $0.queue = nil
            $0.onChange = nil
        }
    }

    /// Whether `start` was called and `stop` was not.
    public var isStarted: Bool { state.withLock { $0.onChange != nil } }

    /// The uids currently watched (asked about and not forgotten).
    public var watchedUIDs: Set<UInt32> { state.withLock { $0.watched } }

    /// Sets `uid`'s session state; reports a change if it is one, the uid is
    /// watched and the monitor is started.
    public func set(uid: UInt32, active: Bool) {
        let delivery = state.withLock { state -> (DispatchQueue, @Sendable ([SessionChange]) -> Void)? in
            let previous = state.active[uid] ?? defaultActive
            state.active[uid] = active
            guard tracksSessions, previous != active, state.watched.contains(uid),
                let queue = state.queue, let onChange = state.onChange
            else { return nil }
            return (queue, onChange)
        }
        guard let (queue, onChange) = delivery else { return }
        queue.async { onChange([SessionChange(uid: uid, active: active)]) }
    }
}
