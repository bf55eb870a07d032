import AklocCore

/// How fast queued fixes may go to the broker (`[mqtt] drain-rate`,
/// docs/mqtt.md, "Drain rate"): after an outage of weeks the backlog would
/// otherwise reach the consumer as fast as the link allows, and flood it
/// (owntracks/recorder #565). Pure: it takes `now` and says whether to send
/// or until when to wait; the forwarder publishes or arms its timer.
///
/// Fixes are spaced at least `1 / rate` seconds apart. A send that comes
/// late (the loop was busy, the window was full) does not earn a burst:
/// the next slot counts from the later of the planned slot and the send.
public struct DrainPacer: Hashable, Sendable {
    public enum Decision: Hashable, Sendable {
        case send
        /// Not before `until`, `delay` seconds from now.
        case wait(until: Instant, delay: Double)
    }

    /// Fixes per second; nil for no limit.
    public let rate: Double?
    /// When the next fix may go; nil until one was sent (or with no limit).
    public private(set) var nextSlot: Instant?

    public init(rate: Double?) {
        precondition(rate.map { $0 > 0 && $0.isFinite } ?? true, "a drain rate is a positive number")
        self.rate = rate
    }

    public func decide(at now: Instant) -> Decision {
        guard let nextSlot, now < nextSlot else { return .send }
        return .wait(until: nextSlot, delay: nextSlot.seconds(since: now))
    }

    /// A fix went out at `now`.
    public mutating func sent(at now: Instant) {
        guard let rate else { return }
        let from = max(nextSlot ?? now, now)
        nextSlot = from.advanced(bySeconds: 1 / rate)
    }
}
