import AklocCore

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
    }
}
