/// The pure decision core (DESIGN §1): fixes, source changes, timer ticks and
/// subscriber requests in; deliveries, replies and timers out.
///
/// Every rule is written out in docs/semantics.md. Outputs of one `handle`
/// come in a fixed order: events (grouped per identical event), then `state`
/// and `source` change events, then the reply to the request being handled,
/// then `.watch`, `.armTimer` and `.persist`.
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

    /// Running totals for `status`.
    public struct Counters: Hashable, Sendable {
        /// `.fix` inputs (TPVs with a fix), every TPV of an epoch included.
        public var fixes: UInt64 = 0
        /// Epochs delivered: the TPVs of one epoch merged into one fix.
        public var epochs: UInt64 = 0
        /// Location events sent, counted per subscriber: throttled and forced
        /// `didUpdateLocation`s, every-epoch copies, location change events
        /// and `requestLocation` answers.
        public var deliveries: UInt64 = 0

        public init() {}
    }

    /// May be changed between inputs (a reload); new values apply to later
    /// starts, observations and authorization requests.
    public var configuration: Configuration

    // The world as the engine knows it.
    var paused = false
    var sourceName: String?
    /// The newest fix. Restored from disk it has no receipt instant and is
    /// never fresh.
    var lastFix: Location?
    /// Receipt of the first TPV of `lastFix`'s epoch.
    var lastFixAt: Instant?
    /// False once the source went away: the fix is kept for `get` only.
    var lastFixLive = false
    /// The selected receiver's latest SKY: the `satellites` key path.
    var lastSky: SkyView?
    /// The visit under way, as the timeline feature last told it (its wire object).
    var currentVisit: [UInt8]?
    /// Whether the latest TPV had a fix (mode >= 2): `running` vs `searching`.
    var latestHadFix = false
    var subscribers: [Subscriber] = []
    var decisions: [UInt32: AuthorizationStatus] = [:]
    public internal(set) var counters = Counters()
    /// gpsd's TPVs becoming epochs (Engine+Fixes.swift).
    var epochs = EpochAssembler()
    /// The derived key paths' lookups and their cache (LocationDerivation.swift).
    var derivation = LocationDerivation()

    // What the shell was last told, so outputs go out only on change.
    var watching = false
    var armedTimer: Instant?
    var reportedState: ServiceState
    var reportedSource: String?

    // Bookkeeping for `.watch` and `.armTimer` without a scan per request.
    var needingCount = 0
    var earliestDeadline: Instant?
    var aggregatesDirty = false

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        reportedState = .sourceUnavailable
    }

    /// An engine resuming after a restart: the paused flag, authorization
    /// decisions and the last location (for `get` only, never fresh) come back.
    public init(configuration: Configuration = Configuration(), restoring state: PersistentState)
        throws(EngineConfigurationError)
    {
        try configuration.validate()
        self.init(configuration: configuration)
        paused = state.paused
        lastFix = state.lastLocation
        decisions = state.authorizationDecisions
        reportedState = self.state
    }

    public mutating func handle(_ input: Input, at now: Instant) -> [Output] {
        var step = Step()
        switch input {
        case .fix(let fix):
            // Most TPVs only join their epoch (gpsd sends one per sentence,
            // 17 an epoch from some receivers): no state, deadline or
            // aggregate can have moved, so there is nothing to finish.
            guard handleFix(fix, at: now, &step) else { return [] }
        case .noFix:
            closeEpoch(at: now, &step)
            latestHadFix = false
        case .sourceConnected(let name): handleSourceConnected(name, at: now, &step)
        case .sourceDisconnected: handleSourceDisconnected(at: now, &step)
        case .tick: handleTick(at: now, &step)
        case .connect(let id, let peer): handleConnect(id, peer)
        case .disconnect(let id): handleDisconnect(id)
        case .request(let id, let token, let request): handleRequest(request, from: id, token, at: now, &step)
        case .authorizationChanged(let id, let status): handleAuthorizationChanged(id, status, at: now, &step)
        case .sessionChanged(let uid, let active): handleSessionChanged(uid: uid, active: active, at: now, &step)
        case .stopping: sendToAll(.didGetNotification(.daemonStopping), &step)
        case .monitoringChanged(let id, let on): handleMonitoringChanged(id, on)
        case .regionsChanged(let id, let names, let crossed): handleRegionsChanged(id, names, crossed, &step)
        case .sky(let sky): handleSky(sky, at: now, &step)
        case .visited(let visit, let departed): handleVisited(visit, departed: departed, &step)
        case .adminChanged(let id, let admin): handleAdminChanged(id, admin)
        }
        return finish(step)
    }

    /// What one `handle` accumulates before `finish` orders it.
    struct Step {
        var events: [Output] = []
        var reply: Output?
        var persist = false
    }

    private mutating func finish(_ step: Step) -> [Output] {
        var outputs = step.events
        emitServiceChanges(into: &outputs)
        if let reply = step.reply { outputs.append(reply) }
        if aggregatesDirty { recomputeAggregates() }
        let wanted = !paused && needingCount > 0
        if wanted != watching {
            watching = wanted
            outputs.append(.watch(wanted))
            // gpsd may (re)open the device for this watch: its first epochs
            // have another shape (EpochAssembler), so it is learned anew.
            if wanted { epochs.forgetShapes() }
        }
        var deadline = earliestDeadline
        if let epochDeadline = epochs.deadline { deadline = min(deadline ?? epochDeadline, epochDeadline) }
        if deadline != armedTimer {
            armedTimer = deadline
            outputs.append(.armTimer(deadline))
        }
        if step.persist { outputs.append(.persist) }
        return outputs
    }
}
