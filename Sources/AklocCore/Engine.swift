/// The pure decision core (DESIGN §1): fixes, source changes, timer ticks and
/// subscriber requests in; deliveries, replies and timers out.
public struct Engine: Sendable {
    public struct Configuration: Hashable, Sendable {
        public var defaultPolicy: ThrottlePolicy
        public var firstLocationAttempts: Int
        /// Seconds a fix stays fresh enough for a first-fix attempt.
        public var maxFixAge: Double
        /// What `requestAuthorization` grants a client without a rule
        /// (never more than requested); nil denies.
        public var defaultGrant: AuthorizationRequestType?

        public init(
            defaultPolicy: ThrottlePolicy = ThrottlePolicy(),
            firstLocationAttempts: Int = 5,
            maxFixAge: Double = 2,
            defaultGrant: AuthorizationRequestType? = .whenInUse
        ) {
            self.defaultPolicy = defaultPolicy
            self.firstLocationAttempts = firstLocationAttempts
            self.maxFixAge = maxFixAge
            self.defaultGrant = defaultGrant
        }
    }

    public var configuration: Configuration

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    public mutating func handle(_ input: Input, at now: Instant) -> [Output] {
        []
    }
}
