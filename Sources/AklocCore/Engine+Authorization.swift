// Authorization (DESIGN §2): the shell decides a peer's status at connect and
// on reload; the engine answers `requestAuthorization`, stores decisions per
// uid and gates everything location-related on the current status.

extension Engine {
    /// The status a `requestAuthorization` of `type` ends in: never more than
    /// requested nor more than the configured default.
    public static func grant(
        _ type: AuthorizationRequestType, defaultGrant: AuthorizationRequestType?
    ) -> AuthorizationStatus {
        guard let defaultGrant else { return .denied }
        return type == .always && defaultGrant == .always ? .authorizedAlways : .authorizedWhenInUse
    }

    /// The plain notification announcing a status, if it has one.
    static func notification(for status: AuthorizationStatus) -> Notification? {
        switch status {
        case .authorizedAlways: .authorizedAlways
        case .authorizedWhenInUse: .authorizedWhenInUse
        case .denied: .authorizationDenied
        case .notDetermined: nil
        }
    }

    static func userNotification(for status: AuthorizationStatus) -> Notification? {
        switch status {
        case .authorizedAlways: .userAuthorizedAlways
        case .authorizedWhenInUse: .userAuthorizedWhenInUse
        case .denied: .userAuthorizationDenied
        case .notDetermined: nil
        }
    }

    mutating func requestAuthorization(
        _ type: AuthorizationRequestType, index: Int, at now: Instant, _ step: inout Step
    ) -> AuthorizationStatus {
        let current = subscribers[index].authorization
        guard current == .notDetermined else { return current }
        let status = Engine.grant(type, defaultGrant: configuration.defaultGrant)
        let uid = subscribers[index].uid
        decisions[uid] = status
        step.persist = true
        let requester = subscribers[index].id
        if let user = Engine.userNotification(for: status) {
            step.events.append(.send([requester], .didGetNotification(user)))
        }
        // Every undecided connection of the uid learns the decision too.
        var told: [SubscriberID] = []
        for other in subscribers.indices
        where subscribers[other].uid == uid && subscribers[other].authorization == .notDetermined {
            subscribers[other].authorization = status
            told.append(subscribers[other].id)
        }
        if let plain = Engine.notification(for: status) {
            step.events.append(.send(told, .didGetNotification(plain)))
        }
        emitAuthorizationChanges(told, old: .notDetermined, new: status, &step)
        if !paused {
            for id in told {
                if let other = self.index(of: id), subscribers[other].receivesLocations {
                    resumeStreams(index: other, at: now, &step)
                }
            }
        }
        aggregatesDirty = true
        return status
    }

    mutating func handleAuthorizationChanged(
        _ id: SubscriberID, _ status: AuthorizationStatus, at now: Instant, _ step: inout Step
    ) {
        guard let index = index(of: id), subscribers[index].authorization != status else { return }
        let old = subscribers[index].authorization
        let wasReceiving = subscribers[index].receivesLocations
        subscribers[index].authorization = status
        if let plain = Engine.notification(for: status) {
            step.events.append(.send([id], .didGetNotification(plain)))
        }
        emitAuthorizationChanges([id], old: old, new: status, &step)
        if !status.allowsLocation {
            for pending in subscribers[index].pending {
                step.events.append(
                    .reply(id, pending.token, .failure(EngineError(.notAuthorized, "authorization was withdrawn"))))
            }
            subscribers[index].pending.removeAll()
        } else if !wasReceiving, subscribers[index].receivesLocations, !paused {
            resumeStreams(index: index, at: now, &step)
        }
        aggregatesDirty = true
    }

    /// `authorizationStatus` change events for the given subscribers' observers.
    private mutating func emitAuthorizationChanges(
        _ ids: [SubscriberID], old: AuthorizationStatus, new: AuthorizationStatus, _ step: inout Step
    ) {
        let keyPath = KeyPath(.authorizationStatus)
        for id in ids {
            guard let index = index(of: id), let slot = subscribers[index].observationIndex(keyPath) else { continue }
            let sendsOld = subscribers[index].observations[slot].sendsOld
            subscribers[index].observations[slot].lastValue = .string(new.rawValue)
            step.events.append(
                .send(
                    [id],
                    .change(keyPath: keyPath, new: .string(new.rawValue), old: sendsOld ? .string(old.rawValue) : nil)))
        }
    }

    /// A subscriber can receive locations again (authorization regained, or a
    /// whenInUse session back): a first-fix loop that had not succeeded starts over.
    mutating func resumeStreams(index: Int, at now: Instant, _ step: inout Step) {
        guard let updating = subscribers[index].updating, !updating.firstFix.succeeded else { return }
        beginFirstFix(index: index, at: now, &step)
    }
}
