/// The manager's link to aklocd.
public enum AKLocationManagerConnectionState: Hashable, Sendable {
    /// Nothing asked for the daemon yet.
    case disconnected
    /// Connected, waiting for the daemon's `hello`.
    case connecting
    /// Serving: requests and subscriptions are live.
    case connected
    /// The last attempt failed or the connection broke; the next attempt is in `seconds`.
    case waitingToReconnect(seconds: Double)
}
