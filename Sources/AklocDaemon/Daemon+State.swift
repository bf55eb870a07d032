import AklocCore
import AklocGPSD
import Dispatch

extension Daemon {
    /// Writes the durable state (paused flag, last location, authorization
    /// decisions). A failed write is logged and the daemon keeps serving:
    /// losing state across a restart beats refusing locations now.
    func persistState() {
        guard let stateStore else { return }
        do {
            try stateStore.save(engine.persistentState)
        } catch {
            log(.error, "cannot save state to \(stateStore.path): \(error)")
        }
        // Tried either way: a failing disk is not retried once per fix.
        locationSaves.saved(at: SystemClock.monotonicNow())
    }

    /// A new fix is the engine's last location now: save it soon (the first
    /// at once, then at most every `LocationSaveSchedule.interval`), so a
    /// SIGKILL or power loss keeps a recent one. Runs after the fix was
    /// delivered, so the write never delays a client.
    func scheduleLocationSave() {
        guard stateStore != nil, let deadline = locationSaves.fixArrived(at: SystemClock.monotonicNow()) else {
            return
        }
        let timer: DispatchSourceTimer
        if let existing = locationSaveTimer {
            timer = existing
        } else {
            timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in
                self?.assumeIsolated { daemon in
                    // Covered already when something else saved meanwhile.
                    if daemon.locationSaves.isPending { daemon.persistState() }
                }
            }
            timer.activate()
            locationSaveTimer = timer
        }
        let delay = max(0, deadline.seconds(since: SystemClock.monotonicNow()))
        timer.schedule(
            deadline: .now() + .nanoseconds(Int(delay * 1e9)), leeway: delay == 0 ? .milliseconds(10) : .seconds(1))
    }
}
