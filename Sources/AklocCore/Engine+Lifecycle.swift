// Daemon-wide and session-wide changes: pause/resume, the source coming and
// going, login sessions (whenInUse lifecycle).

extension Engine {
    mutating func setPaused(_ value: Bool, at now: Instant, _ step: inout Step) {
        guard paused != value else { return }
        paused = value
        step.persist = true
        aggregatesDirty = true
        if value {
            sendToAll(.didGetNotification(.paused), &step)
            for index in subscribers.indices where !subscribers[index].pending.isEmpty {
                let id = subscribers[index].id
                for pending in subscribers[index].pending {
                    step.events.append(.reply(id, pending.token, .failure(EngineError(.unavailable, "akloc paused"))))
                }
                subscribers[index].pending.removeAll()
            }
            return
        }
        sendToAll(.didGetNotification(.resumed), &step)
        // The next fix reaches every stream at once, its afterTimeInterval
        // spanning the pause.
        for index in subscribers.indices {
            subscribers[index].updating?.throttle.forceNext = true
            for slot in subscribers[index].observations.indices {
                subscribers[index].observations[slot].throttle?.forceNext = true
            }
        }
        restartFirstFixLoops(at: now, &step)
    }

    /// Reruns the first-fix loop of every started subscriber that may receive
    /// locations (on resume and when the source comes back).
    mutating func restartFirstFixLoops(at now: Instant, _ step: inout Step) {
        guard !paused else { return }
        let fresh = hasFreshFix(at: now)
        var firsts = Fanout<Bool>()
        var errors = Fanout<Bool>()
        for index in subscribers.indices
        where subscribers[index].updating != nil && subscribers[index].receivesLocations {
            let id = subscribers[index].id
            switch subscribers[index].updating!.firstFix.begin(hasFreshFix: fresh, at: now) {
            case .succeeded:
                let fix = lastFix!
                firsts.add(id, key: true) { .didGetFirstLocation(fix) }
            case .cantDetectFirstLocation:
                errors.add(id, key: true) { .didGetError(.locationManagerCantDetectFirstLocation) }
            case nil: break
            }
        }
        firsts.emit(into: &step.events)
        errors.emit(into: &step.events)
        aggregatesDirty = true
    }

    mutating func handleSourceConnected(_ name: String, at now: Instant, _ step: inout Step) {
        sourceName = name
        // A new gpsd connection may be a new gpsd: its device's first
        // epochs have another shape, learned anew (EpochAssembler).
        epochs.forgetShapes()
        sendToAll(.didGetNotification(.sourceConnected), &step)
        restartFirstFixLoops(at: now, &step)
    }

    mutating func handleSourceDisconnected(at now: Instant, _ step: inout Step) {
        // The epoch in hand was received: it goes out before the news.
        closeEpoch(at: now, &step)
        lastSky = nil
        guard sourceName != nil else { return }
        sourceName = nil
        lastFixLive = false
        latestHadFix = false
        sendToAll(.didGetNotification(.sourceDisconnected), &step)
        aggregatesDirty = true
    }

    mutating func handleSessionChanged(uid: UInt32, active: Bool, at now: Instant, _ step: inout Step) {
        var changed: [SubscriberID] = []
        var updates = Fanout<UInt64>()
        var changes = Fanout<ChangeKey>()
        var answered: [Output] = []
        // The forced delivery uses the last fix only while it is live; else the next fix is forced.
        let liveFix = lastFixLive && lastFixAt != nil && !paused ? lastFix : nil
        let fresh = hasFreshFix(at: now)
        for index in subscribers.indices
        where subscribers[index].uid == uid && subscribers[index].sessionActive != active {
            subscribers[index].sessionActive = active
            let id = subscribers[index].id
            changed.append(id)
            guard active, subscribers[index].authorization == .authorizedWhenInUse else { continue }
            if subscribers[index].updating != nil {
                if let liveFix {
                    let after = subscribers[index].updating!.throttle.deliver(liveFix, at: now).afterTimeInterval
                    updates.add(id, key: after?.bitPattern ?? Engine.noInterval) {
                        .didUpdateLocation(liveFix, afterTimeInterval: after)
                    }
                    counters.deliveries += 1
                } else {
                    subscribers[index].updating!.throttle.forceNext = true
                }
            }
            for slot in subscribers[index].observations.indices
            where subscribers[index].observations[slot].throttle != nil {
                if let liveFix {
                    _ = subscribers[index].observations[slot].throttle!.deliver(liveFix, at: now)
                    emitLocationChange(liveFix, index: index, slot: slot, id: id, &changes)
                    counters.deliveries += 1
                } else {
                    subscribers[index].observations[slot].throttle!.forceNext = true
                }
            }
            if fresh, let lastFix, !subscribers[index].pending.isEmpty {
                for pending in subscribers[index].pending {
                    answered.append(.reply(id, pending.token, .success(.location(lastFix))))
                    counters.deliveries += 1
                }
                subscribers[index].pending.removeAll()
            }
            if !paused { resumeStreams(index: index, at: now, &step) }
        }
        guard !changed.isEmpty else { return }
        updates.emit(into: &step.events)
        changes.emit(into: &step.events)
        step.events += answered
        step.events.append(.send(changed, .didGetNotification(active ? .appActive : .appInBackground)))
        aggregatesDirty = true
    }
}
