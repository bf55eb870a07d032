/// Per-subscriber throttle settings (DESIGN §2).
///
/// The members stay `var` so callers can tweak a copy; whoever hands a policy
/// to the engine from outside (a client, the config file) goes through
/// `init(updateSpeed:minInterval:maxInterval:distanceFilter:desiredAccuracy:)`,
/// `validate()` or `Decodable`, which all reject nonsense, and the engine
/// validates again before using one.
public struct ThrottlePolicy: Hashable, Sendable {
    /// Speed (m/s) from which the subscriber counts as moving.
    public var updateSpeed: Double = 0.4
    /// Seconds between deliveries while moving.
    public var minInterval: Double = 5
    /// Seconds between deliveries while still: the heartbeat.
    public var maxInterval: Double = 300
    /// Metres a subscriber must have moved for a delivery under `maxInterval`; 0 is off.
    public var distanceFilter: Double = 0
    /// Fixes whose known horizontal accuracy (metres) is worse are skipped; 0 is off.
    public var desiredAccuracy: Double = 0

    /// The defaults of AKLocationManager, with both extra filters off.
    public init() {}

    /// A checked policy; omitted members take their defaults.
    public init(
        updateSpeed: Double = 0.4, minInterval: Double = 5, maxInterval: Double = 300,
        distanceFilter: Double = 0, desiredAccuracy: Double = 0
    ) throws(ThrottlePolicyError) {
        self.updateSpeed = updateSpeed
        self.minInterval = minInterval
        self.maxInterval = maxInterval
        self.distanceFilter = distanceFilter
        self.desiredAccuracy = desiredAccuracy
        try validate()
    }

    /// The longest interval accepted, one leap year of seconds: far beyond any
    /// use, and small enough that deadlines in nanoseconds can never overflow.
    public static let intervalLimit: Double = 366 * 86_400

    /// Throws the first problem found, in member order.
    ///
    /// Zero is allowed everywhere: `minInterval` 0 delivers every epoch while
    /// moving, `maxInterval` 0 every epoch always, `updateSpeed` 0 counts any
    /// motion as moving (a speed of exactly 0 is never moving).
    public func validate() throws(ThrottlePolicyError) {
        let members: [(ThrottlePolicyError.Member, Double)] = [
            (.updateSpeed, updateSpeed), (.minInterval, minInterval), (.maxInterval, maxInterval),
            (.distanceFilter, distanceFilter), (.desiredAccuracy, desiredAccuracy),
        ]
        for (member, value) in members {
            guard value.isFinite else {
                throw ThrottlePolicyError(.notFinite, member, "\(member.rawValue) must be a finite number")
            }
            guard value >= 0 else {
                throw ThrottlePolicyError(.negative, member, "\(member.rawValue) must not be negative (got \(value))")
            }
        }
        for (member, value) in [(ThrottlePolicyError.Member.minInterval, minInterval), (.maxInterval, maxInterval)]
        where value > ThrottlePolicy.intervalLimit {
            throw ThrottlePolicyError(
                .tooLarge, member,
                "\(member.rawValue) must be at most \(Int(ThrottlePolicy.intervalLimit)) s (got \(value))")
        }
        guard minInterval <= maxInterval else {
            throw ThrottlePolicyError(
                .minAboveMax, .minInterval,
                "minInterval (\(minInterval)) must not exceed maxInterval (\(maxInterval))")
        }
    }

    /// Whether `validate()` passes.
    public var isValid: Bool {
        do {
            try validate()
            return true
        } catch {
            return false
        }
    }
}
