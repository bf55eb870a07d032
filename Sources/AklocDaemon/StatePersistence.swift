import AklocCore
import AklocPosix

/// The durable state's store, and when the last location is next saved
/// (`LocationSaveSchedule`), with the timer that does it.
struct StatePersistence {
    /// Nil: nothing is kept on disk (an embedded test's daemon).
    let store: StateStore?
    private var schedule = LocationSaveSchedule()
    /// Made at start by the daemon, whose state it saves when it fires
    /// (`isPending`); armed by `fixDelivered`.
    var timer: (any ShellTimer)?

    init(store: StateStore?) {
        self.store = store
    }

    /// Writes `state` now and returns the failure, if any, for the caller
    /// to report (a refused request) or log (a location save).
    mutating func save(_ state: PersistentState, at now: Instant) -> StateStoreError? {
        guard let store else { return nil }
        // Tried either way: a failing disk is not retried once per fix.
        defer { schedule.saved(at: now) }
        do {
            try store.save(state)
            return nil
        } catch {
            return error
        }
    }

    /// A fix was delivered at `now`: it is the engine's last location, so it
    /// is saved soon (the first at once, then at most every
    /// `LocationSaveSchedule.interval`) and a SIGKILL or power loss keeps a
    /// recent one. The write happens on the timer, after the delivery, so it
    /// never delays a client.
    mutating func fixDelivered(at now: Instant) {
        guard store != nil, let deadline = schedule.fixArrived(at: now) else { return }
        timer?.schedule(at: deadline, leeway: deadline <= now ? 0.01 : 1)
    }

    /// Whether the timer has a save to do: one that happened meanwhile
    /// (a request's, or the stop's) covered it already.
    var isPending: Bool { schedule.isPending }
}
