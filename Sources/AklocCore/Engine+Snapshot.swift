extension Engine {
    /// What the daemon's `status` reports, taken in one O(subscribers) pass.
    public struct Snapshot: Hashable, Sendable {
        public var state: ServiceState
        public var paused: Bool
        /// The connected source's name, nil while disconnected.
        public var source: String?
        public var lastFix: Location?
        /// Receipt of the last fix's epoch; nil for none or a restored one.
        public var lastFixAt: Instant?
        public var clients: Int
        /// Subscribers with `startUpdatingLocation` in force.
        public var updating: Int
        /// Subscribers observing at least one key path.
        public var observing: Int
        /// Whether the engine currently wants the gpsd watch open.
        public var watching: Bool
        public var counters: Counters

        /// For the shell's own tests of how it renders a status.
        public init(
            state: ServiceState, paused: Bool = false, source: String? = nil, lastFix: Location? = nil,
            lastFixAt: Instant? = nil, clients: Int = 0, updating: Int = 0, observing: Int = 0,
            watching: Bool = false, counters: Counters = Counters()
        ) {
            self.state = state
            self.paused = paused
            self.source = source
            self.lastFix = lastFix
            self.lastFixAt = lastFixAt
            self.clients = clients
            self.updating = updating
            self.observing = observing
            self.watching = watching
            self.counters = counters
        }
    }

    public var snapshot: Snapshot {
        var updating = 0
        var observing = 0
        for subscriber in subscribers {
            if subscriber.updating != nil { updating += 1 }
            if !subscriber.observations.isEmpty { observing += 1 }
        }
        return Snapshot(
            state: state, paused: paused, source: sourceName, lastFix: lastFix, lastFixAt: lastFixAt,
            clients: subscribers.count, updating: updating, observing: observing, watching: watching,
            counters: counters)
    }

    /// What the shell writes to the state file. The last location is always
    /// current here, but a new fix alone does not emit `.persist` (that would
    /// be a disk write per second): the shell saves it at stop.
    public var persistentState: PersistentState {
        PersistentState(paused: paused, lastLocation: lastFix, authorizationDecisions: decisions)
    }

    /// A connected subscriber's status (after a stored decision applied at
    /// connect), for the `hello` event; nil for an unknown id.
    public func authorizationStatus(of id: SubscriberID) -> AuthorizationStatus? {
        index(of: id).map { subscribers[$0].authorization }
    }

    /// Whether a connected subscriber may be told a position now: it is
    /// authorized, and a whenInUse one has an active session (pause aside).
    /// The shell's `status` shows the fix only then.
    public func mayReceiveLocations(_ id: SubscriberID) -> Bool {
        index(of: id).map { subscribers[$0].receivesLocations } ?? false
    }

    public var isPaused: Bool { paused }
}
