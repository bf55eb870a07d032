/// The delivery rule for one subscriber stream (DESIGN §2): a value the engine
/// keeps per `startUpdatingLocation` and per `myLocation` observation.
///
/// Time is only ever the monotonic receipt `Instant`, compared in whole
/// nanoseconds so that "elapsed >= threshold" is exact on a manual clock.
public struct Throttle: Hashable, Sendable {
    /// What a delivery reports to the subscriber.
    public struct Delivery: Hashable, Sendable {
        /// Real seconds since the previous delivery; nil for the stream's first.
        public var afterTimeInterval: Double?

        public init(afterTimeInterval: Double?) {
            self.afterTimeInterval = afterTimeInterval
        }
    }

    public private(set) var policy: ThrottlePolicy
    private var minNanos: Int64
    private var maxNanos: Int64
    /// When the last delivery happened; nil until the first.
    public private(set) var lastDeliveryAt: Instant?
    private var lastLatitude = 0.0
    private var lastLongitude = 0.0
    /// Deliver the next offered fix whatever the threshold and filters say
    /// (after a resume or `appActive`).
    public var forceNext = false

    public init(policy: ThrottlePolicy) {
        self.policy = policy
        (minNanos, maxNanos) = Throttle.nanos(policy)
    }

    /// Swaps the policy and keeps the schedule: the next threshold is measured
    /// from the last delivery made under the old policy.
    public mutating func replacePolicy(_ policy: ThrottlePolicy) {
        self.policy = policy
        (minNanos, maxNanos) = Throttle.nanos(policy)
    }

    private static func nanos(_ policy: ThrottlePolicy) -> (Int64, Int64) {
        // Clamped so that an unvalidated policy can never trap the conversion.
        func convert(_ seconds: Double) -> Int64 {
            guard seconds.isFinite, seconds > 0 else { return seconds.isNaN || seconds <= 0 ? 0 : .max }
            return Int64((min(seconds, ThrottlePolicy.intervalLimit) * 1e9).rounded())
        }
        return (convert(policy.minInterval), convert(policy.maxInterval))
    }

    /// Whether `speed` (m/s) counts as moving under this policy.
    public func isMoving(speed: Double) -> Bool {
        speed > 0 && speed >= policy.updateSpeed
    }

    /// The seconds that must pass since the last delivery at `speed`.
    public func threshold(speed: Double) -> Double {
        isMoving(speed: speed) ? policy.minInterval : policy.maxInterval
    }

    /// Offers one epoch's fix, received at `now`, with the speed the engine
    /// settled on for it (see `Throttle.speed`). Returns the delivery, or nil
    /// when the fix is held back.
    public mutating func offer(_ fix: Location, speed: Double, at now: Instant) -> Delivery? {
        guard let last = lastDeliveryAt else {
            guard forceNext || isAccurateEnough(fix) else { return nil }
            return deliver(fix, at: now)
        }
        if forceNext { return deliver(fix, at: now) }
        guard isAccurateEnough(fix) else { return nil }
        let elapsed = now.nanoseconds &- last.nanoseconds
        if isMoving(speed: speed) {
            guard elapsed >= minNanos else { return nil }
            // The distance filter only holds back deliveries under the heartbeat.
            if policy.distanceFilter > 0, elapsed < maxNanos,
                Location.distance(
                    latitude: lastLatitude, longitude: lastLongitude, toLatitude: fix.latitude,
                    longitude: fix.longitude) < policy.distanceFilter
            {
                return nil
            }
        } else {
            guard elapsed >= maxNanos else { return nil }
        }
        return deliver(fix, at: now)
    }

    /// Delivers `fix` now unconditionally (a forced delivery with a fix in hand).
    public mutating func deliver(_ fix: Location, at now: Instant) -> Delivery {
        let after = lastDeliveryAt.map { now.seconds(since: $0) }
        lastDeliveryAt = now
        lastLatitude = fix.latitude
        lastLongitude = fix.longitude
        forceNext = false
        return Delivery(afterTimeInterval: after)
    }

    /// Unknown accuracy passes: many receivers never report `eph`, and
    /// starving their subscribers would be worse than an unchecked fix.
    private func isAccurateEnough(_ fix: Location) -> Bool {
        guard policy.desiredAccuracy > 0, let accuracy = fix.horizontalAccuracy else { return true }
        return accuracy <= policy.desiredAccuracy
    }

    /// The speed a fix is judged by: the receiver's when known, else distance
    /// over receipt time since the previous epoch's fix, else 0.
    public static func speed(
        of fix: Location, receivedAt now: Instant, previous: Location?, previousReceivedAt: Instant?
    ) -> Double {
        if let speed = fix.speed { return speed }
        guard let previous, let previousReceivedAt else { return 0 }
        let seconds = now.seconds(since: previousReceivedAt)
        guard seconds > 0 else { return 0 }
        return fix.distance(to: previous) / seconds
    }
}
