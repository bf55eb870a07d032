import AklocCore

/// Which node of the broker to connect to, and when (docs/mqtt.md, "Clusters
/// and failover"). Pure: it takes `now` and says what to do; the forwarder
/// opens the connection or arms the timer.
///
/// A lost connection, a refused or timed-out attempt, or a dead peer moves
/// to the next node at once, so a cluster with a live node is back within
/// one connection set-up. Only when every node failed in a row (a round)
/// does it back off, and the next round starts at the node after the last
/// one tried. A good connection ends the outage: the backoff starts over.
/// With one node this is `Reconnect`'s behaviour: back off after each failure.
public struct BrokerFailover: Hashable, Sendable {
    public enum State: Hashable, Sendable {
        /// Not started, or stopped: nothing is attempted.
        case stopped
        /// An attempt on `node` is under way; `failedInRound` nodes failed
        /// in a row before it since the last connection or the last wait.
        case connecting(node: Int, failedInRound: Int)
        /// `node` accepted the connection at `since`.
        case connected(node: Int, since: Instant)
        /// Every node failed in a row: `node` is tried at `until`.
        case waiting(node: Int, until: Instant)
    }

    public enum Action: Hashable, Sendable {
        case none
        /// Open a connection to `node` now.
        case connect(node: Int)
        /// Arm a timer for `at` (`delay` seconds from now) and call `timerFired` then.
        case retry(at: Instant, delay: Double)
    }

    public let nodeCount: Int
    public private(set) var state: State = .stopped
    public private(set) var backoff: Backoff
    /// Times an attempt went to another node than the one before it.
    public private(set) var switches: UInt64 = 0
    /// Failures since the last good connection (0 while connected).
    public private(set) var failures = 0
    private var lastNode = 0

    public init(nodeCount: Int, backoff: Backoff = Backoff()) {
        precondition(nodeCount > 0, "a broker has at least one node")
        self.nodeCount = nodeCount
        self.backoff = backoff
    }

    /// The node connected to, being tried, or tried next; nil when stopped.
    public var node: Int? {
        switch state {
        case .stopped: nil
        case .connecting(let node, _), .connected(let node, _), .waiting(let node, _): node
        }
    }

    public var isConnected: Bool {
        if case .connected = state { return true }
        return false
    }

    /// Starts at the first node; a no-op when already started.
    public mutating func start(at now: Instant) -> Action {
        guard case .stopped = state else { return .none }
        backoff.reset()
        failures = 0
        return attempt(0, failedInRound: 0)
    }

    /// The attempt under way succeeded.
    public mutating func connected(at now: Instant) {
        guard case .connecting(let node, _) = state else { return }
        backoff.reset()
        failures = 0
        state = .connected(node: node, since: now)
    }

    /// The attempt under way failed, or the connection was lost: the next
    /// node now, or, once every node failed in a row, a wait. `unitRandom`
    /// (0..<1) is the backoff's jitter, from the caller so this stays pure.
    public mutating func failed(at now: Instant, unitRandom: Double) -> Action {
        let node: Int
        let failedBefore: Int
        switch state {
        case .stopped, .waiting:
            return .none
        case .connecting(let tried, let failedInRound):
            (node, failedBefore) = (tried, failedInRound)
        case .connected(let lost, _):
            (node, failedBefore) = (lost, 0)
        }
        failures += 1
        let next = (node + 1) % nodeCount
        if failedBefore + 1 < nodeCount {
            return attempt(next, failedInRound: failedBefore + 1)
        }
        let delay = backoff.nextDelay(unitRandom: unitRandom)
        let due = now.advanced(bySeconds: delay)
        state = .waiting(node: next, until: due)
        return .retry(at: due, delay: delay)
    }

    /// The retry timer fired: connect when the wait is over (a timer that
    /// fires early is armed again for what is left).
    public mutating func timerFired(at now: Instant) -> Action {
        guard case .waiting(let node, let due) = state else { return .none }
        guard now >= due else { return .retry(at: due, delay: due.seconds(since: now)) }
        return attempt(node, failedInRound: 0)
    }

    /// Stops for good (until the next `start`); the owner cancels its timer.
    public mutating func stop() {
        state = .stopped
    }

    private mutating func attempt(_ node: Int, failedInRound: Int) -> Action {
        if node != lastNode { switches += 1 }
        lastNode = node
        state = .connecting(node: node, failedInRound: failedInRound)
        return .connect(node: node)
    }
}
