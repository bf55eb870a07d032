// Subscriber requests. Each gets exactly one reply, after the events it caused
// (a parked requestLocation gets it later, from a fix, a tick or a pause).

extension Engine {
    /// The longest `requestLocation` timeout accepted, in seconds.
    public static let requestTimeoutLimit: Double = 86_400

    mutating func handleConnect(_ id: SubscriberID, _ peer: Peer) {
        if index(of: id) != nil { handleDisconnect(id) }
        var authorization = peer.authorization
        // A decision the uid made earlier answers for its new connections.
        if authorization == .notDetermined, let decided = decisions[peer.uid] { authorization = decided }
        var subscriber = Subscriber(
            id: id, uid: peer.uid, authorization: authorization, sessionActive: peer.sessionActive)
        subscriber.isAdmin = peer.isAdmin
        subscribers.insert(subscriber, at: insertionPoint(for: id))
    }

    mutating func handleDisconnect(_ id: SubscriberID) {
        guard let index = index(of: id) else { return }
        let before = summary(at: index)
        subscribers.remove(at: index)
        note(before, Summary())
    }

    mutating func handleRequest(
        _ request: Request, from id: SubscriberID, _ token: RequestToken, at now: Instant, _ step: inout Step
    ) {
        guard let index = index(of: id) else {
            // The shell only forwards requests of live connections; answer anyway so nothing waits forever.
            step.reply = .reply(id, token, .failure(EngineError(.badRequest, "subscriber \(id) is not connected")))
            return
        }
        let before = summary(at: index)
        if let result = perform(request, index: index, token: token, at: now, &step) {
            step.reply = .reply(id, token, result)
        }
        if aggregatesDirty { return }
        noteChange(at: index, from: before)
    }

    /// Carries out one request; nil when the reply comes later (a parked `requestLocation`).
    private mutating func perform(
        _ request: Request, index: Int, token: RequestToken, at now: Instant, _ step: inout Step
    ) -> Result<Reply, EngineError>? {
        switch request {
        case .startUpdatingLocation(let requested, let everyEpoch):
            return startUpdating(requested, everyEpoch: everyEpoch, index: index, at: now, &step)

        case .stopUpdatingLocation:
            subscribers[index].updating = nil
            return .success(.done)

        case .observe(let keyPath, let initial, let old, let requested):
            return observe(keyPath, initial: initial, old: old, requested, index: index, &step)

        case .unobserve(let keyPath):
            guard let slot = subscribers[index].observationIndex(keyPath) else {
                return .failure(EngineError(.badRequest, "not observing \(keyPath)"))
            }
            subscribers[index].observations.remove(at: slot)
            return .success(.done)

        case .get(let keyPath):
            if keyPath.readsHistory, !subscribers[index].readsHistory {
                return .failure(notHistory(subscribers[index]))
            }
            if keyPath.revealsLocation, !subscribers[index].authorization.allowsLocation {
                return .failure(notAuthorized(subscribers[index]))
            }
            return .success(.value(currentValue(keyPath, for: subscribers[index])))

        case .requestLocation(let timeout):
            return requestLocation(timeout: timeout, index: index, token: token, at: now)

        case .requestAuthorization(let type):
            return .success(.authorization(requestAuthorization(type, index: index, at: now, &step)))

        case .configure(let requested):
            let policy: ThrottlePolicy
            switch validated(requested, for: subscribers[index]) {
            case .success(let valid): policy = valid
            case .failure(let error): return .failure(error)
            }
            subscribers[index].defaultPolicy = policy
            return .success(.done)

        case .startMonitoringVisits:
            guard subscribers[index].readsHistory else { return .failure(notHistory(subscribers[index])) }
            subscribers[index].monitoringVisits = true
            return .success(.done)

        case .stopMonitoringVisits:
            subscribers[index].monitoringVisits = false
            return .success(.done)

        case .pause:
            setPaused(true, at: now, &step)
            return .success(.done)

        case .resume:
            setPaused(false, at: now, &step)
            return .success(.done)
        }
    }

    private mutating func startUpdating(
        _ requested: ThrottlePolicy.Partial?, everyEpoch: Bool, index: Int, at now: Instant, _ step: inout Step
    ) -> Result<Reply, EngineError> {
        // Its own arguments first (a bad policy is badRequest whoever asks).
        let policy: ThrottlePolicy
        switch validated(requested, for: subscribers[index]) {
        case .success(let valid): policy = valid
        case .failure(let error): return .failure(error)
        }
        guard subscribers[index].authorization.allowsLocation else {
            step.events.append(.send([subscribers[index].id], .didGetNotification(.locationManagerNotAuthorized)))
            return .failure(notAuthorized(subscribers[index]))
        }
        if subscribers[index].updating != nil {
            subscribers[index].updating!.throttle.replacePolicy(policy)
            subscribers[index].updating!.everyEpoch = everyEpoch
            return .success(.done)
        }
        subscribers[index].updating = .init(
            throttle: Throttle(policy: policy), everyEpoch: everyEpoch,
            firstFix: FirstFixLoop(attempts: configuration.firstLocationAttempts))
        if paused || !subscribers[index].receivesLocations { return .success(.done) }
        beginFirstFix(index: index, at: now, &step)
        return .success(.done)
    }

    private mutating func observe(
        _ keyPath: KeyPath, initial: Bool, old: Bool, _ requested: ThrottlePolicy.Partial?, index: Int,
        _ step: inout Step
    ) -> Result<Reply, EngineError> {
        let policy: ThrottlePolicy
        switch validated(requested, for: subscribers[index]) {
        case .success(let valid): policy = valid
        case .failure(let error): return .failure(error)
        }
        if keyPath.readsHistory, !subscribers[index].readsHistory {
            return .failure(notHistory(subscribers[index]))
        }
        if keyPath.revealsLocation, !subscribers[index].authorization.allowsLocation {
            return .failure(notAuthorized(subscribers[index]))
        }
        let current = currentValue(keyPath, for: subscribers[index])
        if let slot = subscribers[index].observationIndex(keyPath) {
            subscribers[index].observations[slot].sendsOld = old
            subscribers[index].observations[slot].throttle?.replacePolicy(policy)
        } else {
            subscribers[index].observations.append(
                .init(
                    keyPath: keyPath, sendsOld: old,
                    throttle: keyPath.root == .myLocation || keyPath.isDerived || keyPath.root == .satellites
                        ? Throttle(policy: policy) : nil,
                    lastValue: current))
        }
        if initial {
            step.events.append(.send([subscribers[index].id], .change(keyPath: keyPath, new: current, old: nil)))
        }
        return .success(.done)
    }

    /// One fresh location, or parked until one comes (nil) or the timeout.
    private mutating func requestLocation(timeout: Double, index: Int, token: RequestToken, at now: Instant)
        -> Result<Reply, EngineError>?
    {
        guard timeout.isFinite, timeout > 0, timeout <= Engine.requestTimeoutLimit else {
            return .failure(
                EngineError(
                    .badRequest,
                    "timeout must be above 0 and at most \(Int(Engine.requestTimeoutLimit)) s (got \(timeout))"))
        }
        guard subscribers[index].authorization.allowsLocation else {
            return .failure(notAuthorized(subscribers[index]))
        }
        guard !paused else { return .failure(EngineError(.unavailable, "akloc is paused")) }
        if subscribers[index].receivesLocations, hasFreshFix(at: now), let lastFix {
            counters.deliveries += 1
            return .success(.location(lastFix))
        }
        subscribers[index].pending.append(.init(token: token, deadline: now.advanced(bySeconds: timeout)))
        return nil
    }

    private func validated(
        _ requested: ThrottlePolicy.Partial?, for subscriber: Subscriber
    ) -> Result<ThrottlePolicy, EngineError> {
        let policy = policy(requested, for: subscriber)
        do {
            try policy.validate()
            return .success(policy)
        } catch {
            return .failure(EngineError(error))
        }
    }

    private func notHistory(_ subscriber: Subscriber) -> EngineError {
        EngineError(
            .notAuthorized,
            "visits need an \"always\" authorization or the admin group: they are history "
                + "(status \(subscriber.authorization.rawValue))")
    }

    private func notAuthorized(_ subscriber: Subscriber) -> EngineError {
        EngineError(.notAuthorized, "location needs authorization (status \(subscriber.authorization.rawValue))")
    }

    /// Runs a first-fix loop's immediate attempt and reports its outcome.
    mutating func beginFirstFix(index: Int, at now: Instant, _ step: inout Step) {
        guard subscribers[index].updating != nil else { return }
        let fresh = hasFreshFix(at: now)
        let outcome = subscribers[index].updating!.firstFix.begin(hasFreshFix: fresh, at: now)
        let id = subscribers[index].id
        switch outcome {
        case .succeeded: step.events.append(.send([id], .didGetFirstLocation(lastFix!)))
        case .cantDetectFirstLocation:
            step.events.append(.send([id], .didGetError(.locationManagerCantDetectFirstLocation)))
        case nil: break
        }
    }
}
