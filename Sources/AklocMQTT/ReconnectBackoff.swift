/// Delays between attempts to reach the broker: 0.5 s, doubling, capped at
/// 30 s, with jitter that only shortens a delay, so a fleet of daemons that
/// lost the same broker do not all come back in the same instant, and the
/// cap stays a hard bound. Pure: the random number comes from the caller.
public struct ReconnectBackoff: Hashable, Sendable {
    public var initial: Double
    public var maximum: Double
    /// Fraction of the nominal delay that jitter may take off, 0...1.
    public var jitter: Double
    /// Delays handed out since the last `reset()`.
    public private(set) var attempts = 0

    public init(initial: Double = 0.5, maximum: Double = 30, jitter: Double = 0.25) {
        self.initial = max(initial, 0)
        self.maximum = max(maximum, self.initial)
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The delay before attempt `attempt` (0-based), without jitter.
    public func nominalDelay(attempt: Int) -> Double {
        var delay = initial
        for _ in 0..<min(attempt, 64) {
            delay *= 2
            if delay >= maximum { return maximum }
        }
        return min(delay, maximum)
    }

    /// The next delay in seconds; `unitRandom` is uniform in 0..<1.
    public mutating func nextDelay(unitRandom: Double) -> Double {
        let nominal = nominalDelay(attempt: attempts)
        attempts += 1
        let unit = unitRandom.isFinite ? min(max(unitRandom, 0), 1) : 0
        return nominal * (1 - jitter * unit)
    }

    /// After a connection the broker accepted.
    public mutating func reset() {
        attempts = 0
    }
}
