/// The one reconnect state machine, shared by the gpsd source and the MQTT
/// forwarder: pure, it takes `now` and says what to do, and the owner carries
/// it out (open a connection, arm a timer). Each state carries only what is
/// valid in it, so "waiting with no deadline" or "connected and counting
/// failures" cannot be written down.
///
/// `attempt` counts the failures since the last good connection; the delay
/// before the next attempt comes from `Backoff`, which is reset by a good
/// connection. The first failure of an outage is flagged (`announce`) so the
/// owner tells its users once per outage, not once per attempt.
public struct Reconnect: Hashable, Sendable {
    public enum State: Hashable, Sendable {
        /// Not started, or stopped: nothing is attempted.
        case stopped
        /// An attempt is under way (connecting, or handshaking).
        case connecting(attempt: Int)
        /// The peer answered; `since` is when.
        case connected(since: Instant)
        /// Backing off: the next attempt is due at `until`.
        case waiting(until: Instant, attempt: Int)
    }

    public enum Action: Hashable, Sendable {
        case none
        /// Open a connection now.
        case connect
        /// Arm a timer for `at` (`delay` seconds from now) and call
        /// `timerFired` then. `announce`: the first failure of this outage.
        case retry(at: Instant, delay: Double, announce: Bool)
    }

    public private(set) var state: State = .stopped
    public private(set) var backoff: Backoff

    public init(backoff: Backoff = Backoff()) {
        self.backoff = backoff
    }

    /// Failures since the last good connection.
    public var failures: Int {
        switch state {
        case .stopped, .connected: 0
        case .connecting(let attempt), .waiting(_, let attempt): attempt
        }
    }

    public var isConnected: Bool {
        if case .connected = state { return true }
        return false
    }

    /// Starts connecting; a no-op when already started.
    public mutating func start(at now: Instant) -> Action {
        guard case .stopped = state else { return .none }
        backoff.reset()
        state = .connecting(attempt: 0)
        return .connect
    }

    /// The attempt under way succeeded.
    public mutating func connected(at now: Instant) -> Action {
        guard case .connecting = state else { return .none }
        backoff.reset()
        state = .connected(since: now)
        return .none
    }

    /// The attempt under way failed, or the connection was lost: back off.
    /// `unitRandom` (0..<1) is the jitter, from the caller so this stays pure.
    public mutating func failed(at now: Instant, unitRandom: Double) -> Action {
        let attempt: Int
        let announce: Bool
        switch state {
        case .stopped, .waiting:
            return .none
        case .connecting(let failures):
            attempt = failures
            announce = failures == 0
        case .connected:
            backoff.reset()
            attempt = 0
            announce = true
        }
        let delay = backoff.nextDelay(unitRandom: unitRandom)
        let due = now.advanced(bySeconds: delay)
        state = .waiting(until: due, attempt: attempt + 1)
        return .retry(at: due, delay: delay, announce: announce)
    }

    /// The retry timer fired: connect when the wait is over (a timer that
    /// fires early is armed again for what is left).
    public mutating func timerFired(at now: Instant) -> Action {
        guard case .waiting(let due, let attempt) = state else { return .none }
        guard now >= due else { return .retry(at: due, delay: due.seconds(since: now), announce: false) }
        state = .connecting(attempt: attempt)
        return .connect
    }

    /// Stops for good (until the next `start`); the owner cancels its timer.
    public mutating func stop() {
        state = .stopped
    }
}
