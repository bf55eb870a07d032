// The `satellites` key path (DESIGN §16): each SKY report of the selected
// receiver, to the observers that may know where it is.

extension Engine {
    /// A change goes to an observer when the sky differs from the one it last
    /// got (counts, dilutions, satellites; not the report's times) and its
    /// policy's `minInterval` has passed since its last change. A change
    /// held back by the interval goes out with the first SKY after it: gpsd
    /// sends one every epoch.
    mutating func handleSky(_ sky: SkyView, at now: Instant, _ step: inout Step) {
        lastSky = sky
        guard !paused else { return }
        let keyPath = KeyPath(.satellites)
        let new = KeyPathValue.sky(sky)
        var changes = Fanout<ChangeKey>()
        var delivered: UInt64 = 0
        for index in subscribers.indices where subscribers[index].receivesLocations {
            guard let slot = subscribers[index].observationIndex(keyPath) else { continue }
            let observation = subscribers[index].observations[slot]
            if case .sky(let seen) = observation.lastValue, seen.sameSky(as: sky) { continue }
            if let sentAt = observation.lastSentAt, let policy = observation.throttle?.policy,
                now.seconds(since: sentAt) < policy.minInterval
            {
                continue
            }
            let old = observation.sendsOld ? observation.lastValue : nil
            subscribers[index].observations[slot].lastValue = new
            subscribers[index].observations[slot].lastSentAt = now
            changes.add(subscribers[index].id, key: ChangeKey(keyPath: keyPath, old: old)) {
                .change(keyPath: keyPath, new: new, old: old)
            }
            delivered += 1
        }
        counters.deliveries += delivered
        changes.emit(into: &step.events)
    }
}
