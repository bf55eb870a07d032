extension ThrottlePolicy {
    /// A policy as a client sends it: any member may be left out, and the
    /// engine fills those from the subscriber's default policy (its own
    /// `configure`, else the daemon's `[throttle]`), then validates the
    /// whole. So `akloc watch --min 1` changes the minimum interval alone.
    public struct Partial: Hashable, Sendable {
        public var updateSpeed: Double?
        public var minInterval: Double?
        public var maxInterval: Double?
        public var distanceFilter: Double?
        public var desiredAccuracy: Double?

        public init(
            updateSpeed: Double? = nil, minInterval: Double? = nil, maxInterval: Double? = nil,
            distanceFilter: Double? = nil, desiredAccuracy: Double? = nil
        ) {
            self.updateSpeed = updateSpeed
            self.minInterval = minInterval
            self.maxInterval = maxInterval
            self.distanceFilter = distanceFilter
            self.desiredAccuracy = desiredAccuracy
        }

        /// Every member given: the whole of `policy`.
        public init(_ policy: ThrottlePolicy) {
            self.init(
                updateSpeed: policy.updateSpeed, minInterval: policy.minInterval, maxInterval: policy.maxInterval,
                distanceFilter: policy.distanceFilter, desiredAccuracy: policy.desiredAccuracy)
        }

        /// No member given.
        public var isEmpty: Bool { self == Partial() }

        /// Whether what is given can be part of a valid policy: each member
        /// valid on its own (finite, not negative, in range), and
        /// `minInterval` ≤ `maxInterval` when both are given. Whether it is
        /// valid with the rest is known only once `applied(to:)` a base.
        public func validate() throws(ThrottlePolicyError) {
            // The widest base: only what was given can fail.
            var widest = ThrottlePolicy()
            widest.minInterval = 0
            widest.maxInterval = ThrottlePolicy.intervalLimit
            try applied(to: widest).validate()
        }

        /// `base` with the given members replaced (not validated: the merged
        /// policy is what must pass `validate()`, e.g. min ≤ max).
        public func applied(to base: ThrottlePolicy) -> ThrottlePolicy {
            var policy = base
            if let updateSpeed { policy.updateSpeed = updateSpeed }
            if let minInterval { policy.minInterval = minInterval }
            if let maxInterval { policy.maxInterval = maxInterval }
            if let distanceFilter { policy.distanceFilter = distanceFilter }
            if let desiredAccuracy { policy.desiredAccuracy = desiredAccuracy }
            return policy
        }
    }
}
