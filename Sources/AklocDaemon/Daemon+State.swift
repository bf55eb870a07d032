import AklocCore
import AklocGPSD
import AklocPosix
import AklocProtocol
import Dispatch

extension Daemon {
    /// Writes the durable state (paused flag, last location, authorization
    /// decisions). A failed write is logged and the daemon keeps serving:
    /// losing state across a restart beats refusing locations now.
    func persistState() {
        if let failure = saveState() { log(.error, "cannot save state to \(failure.path): \(failure)") }
    }

    /// Saves the durable state now; the failure, if any, for the caller to
    /// report (a refused request) or log (a location save).
    func saveState() -> StateStoreError? {
        guard let store = persistence.store else { return nil }
        // Tried either way: a failing disk is not retried once per fix.
        defer { persistence.schedule.saved(at: clock.now()) }
        do {
            try store.save(engine.persistentState)
            return nil
        } catch {
            return error
        }
    }

    /// Answers a pending engine request with an error instead of the engine's reply.
    func refuse(_ token: RequestToken, of subscriber: SubscriberID, _ error: ProtocolError) {
        guard let request = inFlight.requests.removeValue(forKey: token), request.client == subscriber,
            let client = server.clients[subscriber]
        else { return }
        log(.error, "\(error.message)")
        var refused = error
        refused.id = request.id
        if let departure = deliver(ServerEncoder.reply(id: request.id, error: refused), to: client) {
            depart(subscriber, departure)
        }
    }

    /// A new fix is the engine's last location now: save it soon (the first
    /// at once, then at most every `LocationSaveSchedule.interval`), so a
    /// SIGKILL or power loss keeps a recent one. Runs after the fix was
    /// delivered, so the write never delays a client.
    func scheduleLocationSave() {
        guard persistence.store != nil, let deadline = persistence.schedule.fixArrived(at: clock.now()) else {
            return
        }
        let timer: any ShellTimer
        if let existing = persistence.timer {
            timer = existing
        } else {
            timer = clock.makeTimer { [weak self] in
                self?.assumeIsolated { daemon in
                    // Covered already when something else saved meanwhile.
                    if daemon.persistence.schedule.isPending { daemon.persistState() }
                }
            }
            persistence.timer = timer
        }
        timer.schedule(at: deadline, leeway: deadline <= clock.now() ? 0.01 : 1)
    }
}
