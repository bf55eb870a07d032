// Region monitoring's share of the engine (DESIGN §9): the places feature
// runs one region monitor per subscriber over its saved places and tells the
// engine what it saw, so the rules the engine owns stay in one place: a
// monitoring subscriber needs fixes (the gpsd watch), a crossing is told only
// to a subscriber that may have locations now, and the `regions` key path's
// value changed (delivered to its observers like any other change).

extension Engine {
    mutating func handleMonitoringChanged(_ id: SubscriberID, _ on: Bool) {
        guard let index = index(of: id), subscribers[index].monitoring != on else { return }
        let before = summary(at: index)
        subscribers[index].monitoring = on
        if !on { subscribers[index].regions = [] }
        noteChange(at: index, from: before)
    }

    mutating func handleRegionsChanged(
        _ id: SubscriberID, _ names: [String], _ crossed: [RegionCrossing], _ step: inout Step
    ) {
        guard let index = index(of: id) else { return }
        if subscribers[index].receivesLocations {
            for crossing in crossed { step.events.append(.send([id], .didCrossRegion(crossing))) }
        }
        guard subscribers[index].regions != names else { return }
        subscribers[index].regions = names
        guard subscribers[index].receivesLocations,
            let slot = subscribers[index].observationIndex(KeyPath(.regions))
        else { return }
        let observation = subscribers[index].observations[slot]
        let new = KeyPathValue.names(names)
        subscribers[index].observations[slot].lastValue = new
        step.events.append(
            .send(
                [id],
                .change(keyPath: observation.keyPath, new: new, old: observation.sendsOld ? observation.lastValue : nil)
            ))
    }

    /// The newest epoch while the source is up: what a region monitor is fed
    /// after a step that delivered one (`counters.epochs` moved).
    public var liveFix: Location? { lastFixLive ? lastFix : nil }
}
