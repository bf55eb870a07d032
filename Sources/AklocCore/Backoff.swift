/// Reconnect delays: by default 250 ms, doubling, capped at 10 s, with
/// jitter (gpsd's; the MQTT forwarder starts at 0.5 s and caps at 30 s).
///
/// Jitter only shortens a delay (by up to `jitter` of it), so the cap is a
/// hard bound and many daemons restarted together by one gpsd restart do not
/// reconnect in lock-step. The random number comes from the caller, which
/// keeps this a pure value that tests drive with fixed numbers.
public struct Backoff: Hashable, Sendable {
    public var initial: Double
    public var multiplier: Double
    public var maximum: Double
    /// Fraction of the nominal delay that jitter may take off, 0...1.
    public var jitter: Double
    /// Delays handed out since the last `reset()`.
    public private(set) var attempts = 0

    public init(initial: Double = 0.25, multiplier: Double = 2, maximum: Double = 10, jitter: Double = 0.2) {
        self.initial = max(initial, 0)
        self.multiplier = multiplier
        self.maximum = max(maximum, self.initial)
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The delay before attempt `attempt` (0-based), without jitter.
    public func nominalDelay(attempt: Int) -> Double {
        var delay = initial
        for _ in 0..<min(attempt, 64) {
            delay *= multiplier
            if delay >= maximum { return maximum }
        }
        return min(delay, maximum)
    }

    /// The next delay in seconds; `unitRandom` is a uniform number in 0..<1.
    public mutating func nextDelay(unitRandom: Double) -> Double {
        let nominal = nominalDelay(attempt: attempts)
        attempts += 1
        let unit = unitRandom.isFinite ? min(max(unitRandom, 0), 1) : 0
        return nominal * (1 - jitter * unit)
    }

    /// Called once the source is healthy again.
    public mutating func reset() {
        attempts = 0
    }
}
