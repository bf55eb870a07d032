// Per-connection state and the bookkeeping that keeps `.watch` and
// `.armTimer` current without scanning every subscriber on every request.

extension Engine {
    struct Subscriber: Sendable {
        struct Updating: Sendable {
            var throttle: Throttle
            var everyEpoch: Bool
            var firstFix: FirstFixLoop
        }

        struct Observation: Sendable {
            var keyPath: KeyPath
            var sendsOld: Bool
            /// Only for `myLocation` paths.
            var throttle: Throttle?
            /// The value the observer last saw, the `old` of the next change.
            var lastValue: KeyPathValue
            /// When the last `satellites` change went out: the next waits `minInterval`.
            var lastSentAt: Instant? = nil
        }

        struct Pending: Sendable {
            var token: RequestToken
            var deadline: Instant
        }

        let id: SubscriberID
        var uid: UInt32
        var authorization: AuthorizationStatus
        var sessionActive: Bool
        var defaultPolicy: ThrottlePolicy?
        var updating: Updating?
        var observations: [Observation] = []
        var pending: [Pending] = []
        /// The shell monitors saved places for it (DESIGN §9).
        var monitoring = false
        /// The `regions` key path: places its region monitor has it inside.
        var regions: [String] = []
        /// Root or the admin group.
        var isAdmin = false
        /// Wants `didVisit` events (`startMonitoringVisits`).
        var monitoringVisits = false

        /// May learn history (the `visit` key path, `didVisit`): as the
        /// track, `always` subscribers and admins.
        var readsHistory: Bool { isAdmin || authorization == .authorizedAlways }

        /// Authorization and lifecycle allow locations (pause aside).
        var receivesLocations: Bool {
            switch authorization {
            case .authorizedAlways: true
            case .authorizedWhenInUse: sessionActive
            case .notDetermined, .denied: false
            }
        }

        var observesLocation: Bool { observations.contains { $0.keyPath.revealsLocation } }

        /// Wants the gpsd watch open (pause aside).
        var needsFixes: Bool {
            receivesLocations && (updating != nil || !pending.isEmpty || observesLocation || monitoring)
        }

        func observationIndex(_ keyPath: KeyPath) -> Int? {
            observations.firstIndex { $0.keyPath == keyPath }
        }
    }

    /// The part of a subscriber the aggregates depend on.
    struct Summary: Equatable {
        var needsFixes = false
        var deadline: Instant?
    }

    func summary(_ subscriber: Subscriber) -> Summary {
        var deadline = subscriber.pending.lazy.map(\.deadline).min()
        if !paused, subscriber.receivesLocations, let next = subscriber.updating?.firstFix.nextAttempt {
            deadline = deadline.map { min($0, next) } ?? next
        }
        return Summary(needsFixes: subscriber.needsFixes, deadline: deadline)
    }

    func summary(at index: Int) -> Summary { summary(subscribers[index]) }

    /// Folds one subscriber's change into the aggregates; a deadline that may
    /// have been the earliest forces a rescan in `finish`.
    mutating func note(_ before: Summary, _ after: Summary) {
        needingCount += (after.needsFixes ? 1 : 0) - (before.needsFixes ? 1 : 0)
        guard before.deadline != after.deadline, !aggregatesDirty else { return }
        if let old = before.deadline, old == earliestDeadline {
            aggregatesDirty = true
        } else if let new = after.deadline {
            earliestDeadline = earliestDeadline.map { min($0, new) } ?? new
        }
    }

    mutating func noteChange(at index: Int, from before: Summary) {
        note(before, summary(at: index))
    }

    mutating func recomputeAggregates() {
        var count = 0
        var earliest: Instant?
        for subscriber in subscribers {
            let summary = summary(subscriber)
            if summary.needsFixes { count += 1 }
            if let deadline = summary.deadline { earliest = earliest.map { min($0, deadline) } ?? deadline }
        }
        needingCount = count
        earliestDeadline = earliest
        aggregatesDirty = false
    }

    /// Binary search in the id-sorted array.
    func index(of id: SubscriberID) -> Int? {
        let position = insertionPoint(for: id)
        return position < subscribers.count && subscribers[position].id == id ? position : nil
    }

    func insertionPoint(for id: SubscriberID) -> Int {
        // Ids mostly grow, so a new one usually goes at the end.
        if let last = subscribers.last, last.id < id { return subscribers.count }
        var low = 0
        var high = subscribers.count
        while low < high {
            let mid = (low + high) / 2
            if subscribers[mid].id < id { low = mid + 1 } else { high = mid }
        }
        return low
    }

    var allIDs: [SubscriberID] { subscribers.map(\.id) }

    mutating func sendToAll(_ event: Event, _ step: inout Step) {
        guard !subscribers.isEmpty else { return }
        step.events.append(.send(allIDs, event))
    }

    /// Whether the newest fix is live and younger than `maxFixAge` at `now`.
    func hasFreshFix(at now: Instant) -> Bool {
        guard lastFixLive, let lastFixAt else { return false }
        return FirstFixLoop.isFresh(receivedAt: lastFixAt, at: now, maxFixAge: configuration.maxFixAge)
    }

    /// The `state` key path (DESIGN §3).
    public var state: ServiceState {
        if paused { return .paused }
        guard sourceName != nil else { return .sourceUnavailable }
        return latestHadFix ? .running : .searching
    }

    /// The policy a start or observation gets: the subscriber's default
    /// (its `configure`, else the configuration's) with what it asked for on top.
    func policy(_ requested: ThrottlePolicy.Partial?, for subscriber: Subscriber) -> ThrottlePolicy {
        let base = subscriber.defaultPolicy ?? configuration.defaultPolicy
        return requested?.applied(to: base) ?? base
    }

    /// Sends `state` and `source` change events when their values moved.
    mutating func emitServiceChanges(into outputs: inout [Output]) {
        let newState = state
        if newState != reportedState {
            let old = reportedState
            reportedState = newState
            emitChange(.init(.state), new: .string(newState.rawValue), old: .string(old.rawValue), into: &outputs)
        }
        if sourceName != reportedSource {
            let old = reportedSource
            reportedSource = sourceName
            emitChange(
                .init(.source), new: sourceName.map(KeyPathValue.string) ?? .null,
                old: old.map(KeyPathValue.string) ?? .null, into: &outputs)
        }
    }

    private mutating func emitChange(
        _ keyPath: KeyPath, new: KeyPathValue, old: KeyPathValue, into outputs: inout [Output]
    ) {
        var withOld: [SubscriberID] = []
        var withoutOld: [SubscriberID] = []
        for index in subscribers.indices {
            guard let found = subscribers[index].observationIndex(keyPath) else { continue }
            if subscribers[index].observations[found].sendsOld {
                withOld.append(subscribers[index].id)
            } else {
                withoutOld.append(subscribers[index].id)
            }
            subscribers[index].observations[found].lastValue = new
        }
        if !withoutOld.isEmpty { outputs.append(.send(withoutOld, .change(keyPath: keyPath, new: new, old: nil))) }
        if !withOld.isEmpty { outputs.append(.send(withOld, .change(keyPath: keyPath, new: new, old: old))) }
    }

    /// The current value of a non-location path for `subscriber`.
    func currentValue(_ keyPath: KeyPath, for subscriber: Subscriber) -> KeyPathValue {
        switch keyPath.root {
        // A whenInUse subscriber without an active session may not learn
        // the position by asking either: it gets no value, as with no fix.
        case .myLocation, .rawLocation: subscriber.receivesLocations ? keyPath.value(in: lastFix) : .null
        case .myPlacemark, .country, .timeZone:
            subscriber.receivesLocations ? lastFix.map { derivedValue(keyPath, of: $0) } ?? .null : .null
        case .state: .string(state.rawValue)
        case .source: sourceName.map(KeyPathValue.string) ?? .null
        case .authorizationStatus: .string(subscriber.authorization.rawValue)
        case .regions: subscriber.receivesLocations ? .names(subscriber.regions) : .null
        case .satellites: subscriber.receivesLocations ? lastSky.map(KeyPathValue.sky) ?? .null : .null
        case .visit: subscriber.readsHistory ? currentVisit.map(KeyPathValue.json) ?? .null : .null
        }
    }
}
