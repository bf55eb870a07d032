// Fixes and timer ticks: the hot path, one pass over the subscribers per
// epoch, grouping identical events so 10 000 subscribers on one schedule cost
// one `.send`.

extension Engine {
    /// One TPV with a fix. The epoch assembler decides when its epoch is
    /// delivered (docs/semantics.md "Epochs"); a TPV that only refines an
    /// epoch already delivered updates what `get` returns. Returns false
    /// when the TPV only joined its epoch, which changes nothing else.
    mutating func handleFix(_ fix: Location, at now: Instant, _ step: inout Step) -> Bool {
        counters.fixes += 1
        let result = epochs.offer(fix, at: now)
        if let closed = result.closed { deliverEpoch(closed, at: now, &step) }
        if let completed = result.completed {
            deliverEpoch(completed, at: now, &step)
        } else if let refined = result.refined, lastFixLive {
            lastFix = refined.fix
        }
        return !result.onlyJoined
    }

    /// The epoch being collected, once its wait is over (on a tick).
    mutating func expireEpoch(at now: Instant, _ step: inout Step) {
        if let epoch = epochs.expire(at: now) { deliverEpoch(epoch, at: now, &step) }
    }

    /// Ends the epoch being collected (no fix, source gone) and delivers it.
    mutating func closeEpoch(at now: Instant, _ step: inout Step) {
        if let epoch = epochs.close() { deliverEpoch(epoch, at: now, &step) }
    }

    /// One epoch to every stream that wants it, delivered at `now`.
    /// Throttling runs on the deliveries themselves, so no subscriber sees
    /// two closer than its `minInterval` however long an epoch took to
    /// complete (the first ones wait a whole cycle while the device's shape
    /// is learned). The speed estimate and the fix's freshness run on the
    /// epoch's receipt (its first TPV): they describe the fix, not its delivery.
    mutating func deliverEpoch(_ epoch: EpochAssembler.Epoch, at now: Instant, _ step: inout Step) {
        let fix = epoch.fix
        let received = epoch.receivedAt
        counters.epochs += 1
        // `running` comes with the first fix anyone can be given, not with a
        // TPV still waiting for the rest of its epoch.
        latestHadFix = true
        let speed = Throttle.speed(
            of: fix, receivedAt: received, previous: lastFixLive ? lastFix : nil, previousReceivedAt: lastFixAt)
        lastFix = fix
        lastFixAt = received
        lastFixLive = true
        guard !paused else { return }

        var firsts = Fanout<Bool>()
        var updates = Fanout<UInt64>()
        var raws = Fanout<Bool>()
        var changes = Fanout<ChangeKey>()
        var answered: [Output] = []
        var delivered: UInt64 = 0
        var touchedDeadlines = false
        for index in subscribers.indices where subscribers[index].receivesLocations {
            let id = subscribers[index].id
            if subscribers[index].updating != nil {
                if subscribers[index].updating!.firstFix.fixArrived() != nil {
                    firsts.add(id, key: true) { .didGetFirstLocation(fix) }
                    touchedDeadlines = true
                }
                if let delivery = subscribers[index].updating!.throttle.offer(fix, speed: speed, at: now) {
                    let after = delivery.afterTimeInterval
                    updates.add(id, key: after?.bitPattern ?? Engine.noInterval) {
                        .didUpdateLocation(fix, afterTimeInterval: after)
                    }
                    delivered += 1
                } else if subscribers[index].updating!.everyEpoch {
                    raws.add(id, key: true) { .didUpdateLocation(fix, afterTimeInterval: nil) }
                    delivered += 1
                }
            }
            if !subscribers[index].observations.isEmpty {
                delivered += offerToObservations(fix, speed: speed, at: now, index: index, &changes)
            }
            if !subscribers[index].pending.isEmpty {
                for pending in subscribers[index].pending {
                    answered.append(.reply(id, pending.token, .success(.location(fix))))
                    delivered += 1
                }
                subscribers[index].pending.removeAll()
                touchedDeadlines = true
            }
        }
        counters.deliveries += delivered
        firsts.emit(into: &step.events)
        updates.emit(into: &step.events)
        raws.emit(into: &step.events)
        changes.emit(into: &step.events)
        step.events += answered
        if touchedDeadlines { aggregatesDirty = true }
    }

    /// The key of a delivery without an interval (a stream's first).
    static let noInterval = UInt64.max

    private mutating func offerToObservations(
        _ fix: Location, speed: Double, at now: Instant, index: Int, _ changes: inout Fanout<ChangeKey>
    ) -> UInt64 {
        var delivered: UInt64 = 0
        let id = subscribers[index].id
        for slot in subscribers[index].observations.indices {
            let keyPath = subscribers[index].observations[slot].keyPath
            switch keyPath.root {
            case .rawLocation:
                break
            case .myLocation:
                guard subscribers[index].observations[slot].throttle?.offer(fix, speed: speed, at: now) != nil
                else { continue }
            case .myPlacemark, .country, .timeZone:
                guard subscribers[index].observations[slot].throttle?.offer(fix, speed: speed, at: now) != nil
                else { continue }
                // Delivered on the policy's schedule, but only when the value moved.
                let new = derivedValues(for: fix).value(of: keyPath.root)
                guard new != subscribers[index].observations[slot].lastValue else { continue }
                delivered += 1
                emitDerivedChange(new, index: index, slot: slot, id: id, &changes)
                continue
            case .state, .source, .authorizationStatus, .regions, .satellites, .visit:
                continue
            }
            delivered += 1
            emitLocationChange(fix, index: index, slot: slot, id: id, &changes)
        }
        return delivered
    }

    /// One location change event for one observation, grouped by key path and `old`.
    mutating func emitLocationChange(
        _ fix: Location, index: Int, slot: Int, id: SubscriberID, _ changes: inout Fanout<ChangeKey>
    ) {
        let observation = subscribers[index].observations[slot]
        let new = observation.keyPath.value(in: fix)
        let old = observation.sendsOld ? observation.lastValue : nil
        subscribers[index].observations[slot].lastValue = new
        changes.add(id, key: ChangeKey(keyPath: observation.keyPath, old: old)) {
            .change(keyPath: observation.keyPath, new: new, old: old)
        }
    }

    mutating func handleTick(at now: Instant, _ step: inout Step) {
        expireEpoch(at: now, &step)
        var firsts = Fanout<Bool>()
        var errors = Fanout<Bool>()
        let fresh = hasFreshFix(at: now)
        for index in subscribers.indices {
            let id = subscribers[index].id
            if !subscribers[index].pending.isEmpty {
                subscribers[index].pending.removeAll { pending in
                    guard pending.deadline <= now else { return false }
                    step.events.append(
                        .reply(id, pending.token, .failure(EngineError(.timeout, "no fix arrived in time"))))
                    return true
                }
            }
            guard !paused, subscribers[index].receivesLocations,
                let due = subscribers[index].updating?.firstFix.nextAttempt, due <= now
            else { continue }
            switch subscribers[index].updating!.firstFix.attempt(hasFreshFix: fresh, at: now) {
            case .succeeded:
                let fix = lastFix!
                firsts.add(id, key: true) { .didGetFirstLocation(fix) }
            case .cantDetectFirstLocation:
                errors.add(id, key: true) { .didGetError(.locationManagerCantDetectFirstLocation) }
            case nil:
                break
            }
        }
        firsts.emit(into: &step.events)
        errors.emit(into: &step.events)
        aggregatesDirty = true
    }
}
