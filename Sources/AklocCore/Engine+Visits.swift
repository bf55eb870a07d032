// The live timeline's share of the engine (DESIGN §15): the timeline feature
// runs the visit detector over the recorded fixes and tells the engine each
// arrival and departure; the engine owns who may hear them (history: `always`
// subscribers and admins), as it owns the rules for locations.

extension Engine {
    mutating func handleVisited(_ visit: [UInt8], departed: Bool, _ step: inout Step) {
        currentVisit = departed ? nil : visit
        let new = currentVisit.map(KeyPathValue.json) ?? .null
        let keyPath = KeyPath(.visit)
        var told: [SubscriberID] = []
        var changes = Fanout<ChangeKey>()
        for index in subscribers.indices where subscribers[index].readsHistory {
            if subscribers[index].monitoringVisits { told.append(subscribers[index].id) }
            guard let slot = subscribers[index].observationIndex(keyPath) else { continue }
            let observation = subscribers[index].observations[slot]
            guard observation.lastValue != new else { continue }
            let sent = observation.sendsOld ? observation.lastValue : nil
            subscribers[index].observations[slot].lastValue = new
            changes.add(subscribers[index].id, key: ChangeKey(keyPath: keyPath, old: sent)) {
                .change(keyPath: keyPath, new: new, old: sent)
            }
        }
        if !told.isEmpty { step.events.append(.send(told, .didVisit(visit))) }
        changes.emit(into: &step.events)
    }

    mutating func handleAdminChanged(_ id: SubscriberID, _ admin: Bool) {
        guard let index = index(of: id) else { return }
        subscribers[index].isAdmin = admin
    }
}
