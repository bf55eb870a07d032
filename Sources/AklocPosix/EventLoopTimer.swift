import Synchronization

/// A one-shot timer of an `EventLoop`, re-armed by `schedule`; its handler
/// runs on the loop's thread. Times are `PosixClock.monotonic` nanoseconds.
/// Used on the loop's thread only; letting go of it cancels it.
public final class EventLoopTimer {
    /// When it fires next; nil while disarmed.
    public private(set) var deadline: Int64?
    /// How late it may fire (nanoseconds), so the loop can share a wake-up.
    public private(set) var leeway: Int64 = 0
    public private(set) var isCancelled = false
    /// Bumped on every `schedule`, so a firing round can tell a timer that
    /// an earlier handler re-armed or disarmed.
    private(set) var sequence: UInt64 = 0
    private static let sequences = Atomic<UInt64>(0)
    private var handler: (() -> Void)?
    /// The loop's note that its timers changed, so it rescans them only then.
    private let changes: EventLoop.TimerChanges

    init(handler: @escaping () -> Void, changes: EventLoop.TimerChanges) {
        self.handler = handler
        self.changes = changes
    }

    deinit {
        changes.changed = true
    }

    /// Fires once at `deadline` (at once when it has passed), at most
    /// `leeway` nanoseconds later; nil disarms.
    public func schedule(at deadline: Int64?, leeway: Int64 = 0) {
        guard !isCancelled else { return }
        let leeway = max(0, leeway)
        // The daemon re-arms some timers for the same time on every TPV.
        if deadline == self.deadline, leeway == self.leeway { return }
        self.deadline = deadline
        self.leeway = leeway
        changes.changed = true
        // Orders timers armed for the same instant by when they were armed.
        sequence = Self.sequences.add(1, ordering: .relaxed).newValue
    }

    /// Disarms for good and lets go of the handler (and what it holds).
    public func cancel() {
        isCancelled = true
        deadline = nil
        handler = nil
        changes.changed = true
    }

    func fire() {
        deadline = nil
        changes.changed = true
        handler?()
    }
}
