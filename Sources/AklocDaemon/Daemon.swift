import AklocCore
import AklocFeature
import AklocGPSD
import AklocPosix
import AklocProtocol
import AklocSystemd
import Dispatch

/// The imperative shell (DESIGN §1): the engine, and the router between it
/// and the client server, the gpsd source and the features, all on one
/// serial DispatchQueue that is this actor's executor. Each component and
/// feature owns its own state and reaches the engine only through the
/// daemon (`run`); DispatchSource handlers on the queue enter the actor with
/// `assumeIsolated`, so there are no locks and Swift 6 checks every access.
/// Time and the client transport are injected (`DaemonEnvironment`), so
/// a test can run the whole daemon on virtual time.
actor Daemon {
    nonisolated let executor: QueueExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    nonisolated var queue: DispatchQueue { executor.queue }

    var engine: Engine
    let clock: any ShellClock
    /// Started in this order, stopped in reverse (Daemon+Lifecycle.swift).
    var components = ComponentGroup()
    let server: ClientServer
    let sessions: SessionTracker
    /// The features and their engine subscribers (DESIGN §1): the daemon
    /// routes to them by this table and never names one.
    let features: FeatureRouter
    var source: SourceSlot
    var settings: DaemonSettings
    var inFlight = InFlight()
    /// The shell's own counters; the engine keeps fixes, epochs and deliveries.
    var counters = ShellCounters()
    var persistence: StatePersistence
    let service: ServiceReporter
    var lifecycle: Lifecycle
    let logger: Logger

    init(
        options: DaemonOptions, configuration: Configuration, configPath: String?, engine: Engine,
        stateStore: StateStore?, sessions: any SessionMonitor, logger: Logger,
        environment: DaemonEnvironment = DaemonEnvironment()
    ) {
        let queue = environment.queue ?? DispatchQueue(label: "akloc.daemon")
        executor = QueueExecutor(queue: queue)
        let settings = DaemonSettings(configuration: configuration, options: options, configPath: configPath)
        self.settings = settings
        persistence = StatePersistence(store: stateStore)
        self.logger = logger
        self.engine = engine
        let clock = environment.makeClock(queue)
        self.clock = clock
        lifecycle = Lifecycle(startedAt: clock.now())
        let log: (LogLevel, String, KeyValuePairs<String, String>) -> Void = { level, message, fields in
            logger.log(level, message, fields)
        }
        server = ClientServer(
            listening: environment.listening ?? .path(settings.socketPath, mode: configuration.socket.mode),
            hardLimit: configuration.socket.clientHardLimit, queue: queue, clock: clock, log: log)
        self.sessions = SessionTracker(monitor: sessions, queue: queue, log: log)
        features = FeatureRouter(
            plugs: environment.features, queue: queue, clock: clock, stateDirectory: stateStore?.directory,
            logger: logger)
        service = ServiceReporter(clock: clock) { level, message in logger.log(level, message, [:]) }
        let makeGPSD: (GPSDEndpoint, String?) -> any FixSource = { endpoint, device in
            GPSDSource(
                endpoint: endpoint, device: device, queue: queue,
                log: { level, message in logger.log(level, message, ["AKLOC_SOURCE": endpoint.sourceName]) },
                clock: clock)
        }
        if let make = environment.makeSource {
            source = SourceSlot(make: { make($0, $1) })
        } else {
            source = SourceSlot(make: makeGPSD)
        }
    }

    /// `assumeIsolated` with the same check, done directly: the queue is
    /// the executor's (`QueueExecutor.checkIsolated` makes exactly this
    /// check). For the gpsd source's callback, which runs once per TPV:
    /// the runtime's general check (the current task's executor, then
    /// whether it is the main actor's, then `checkIsolated`) took 4 % of
    /// aklocd's CPU in bench/cpu-per-epoch.sh's scenario (issue 19).
    /// `value` is passed in rather than captured, so the closure needs no
    /// context of its own; inlined and `@escaping` (a closure without a
    /// context is never copied to the heap), it allocates nothing, where the
    /// generic call through `withoutActuallyEscaping` allocated twice a TPV.
    @inline(__always)
    nonisolated func onQueue<Value>(_ value: Value, _ operation: @escaping (isolated Daemon, Value) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        // What the standard library's `assumeIsolated` does once checked.
        let plain = unsafeBitCast(operation, to: ((Daemon, Value) -> Void).self)
        plain(self, value)
    }

    static func engineConfiguration(_ configuration: Configuration) -> Engine.Configuration {
        Engine.Configuration(
            defaultPolicy: configuration.throttle.policy,
            firstLocationAttempts: configuration.throttle.firstLocationAttempts,
            maxFixAge: configuration.throttle.maxFixAge,
            defaultGrant: Authorizer(rules: configuration.authorization).defaultGrant)
    }

    func log(_ level: Logger.Level, _ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:])
    {
        logger.log(level, message(), fields)
    }

    // MARK: Engine

    /// Feeds one input to the engine and carries out what it decided. An
    /// input that arrives while a step is carried out (from a feature's sink,
    /// a client that had to leave) runs once that step is done, so every
    /// step is carried out whole and in order.
    func run(_ input: Engine.Input) {
        if inFlight.inStep {
            inFlight.deferred.append(input)
            return
        }
        inFlight.inStep = true
        step(input)
        while !inFlight.deferred.isEmpty { step(inFlight.deferred.removeFirst()) }
        inFlight.inStep = false
    }

    private func step(_ input: Engine.Input) {
        // A request that changes durable state (pause, resume, an answer to
        // requestAuthorization) is acknowledged only once it is on disk; when
        // it cannot be saved (ENOSPC, EROFS) it did not happen: the engine
        // goes back to before it and the requester is told why. Only those
        // keep a copy of the engine: on the fix path a copy would make every
        // mutation of its collections copy them (copy-on-write).
        guard case .request(let subscriber, let token, let request) = input, request.changesDurableState else {
            let epochs = engine.counters.epochs
            let outputs = engine.handle(input, at: clock.now())
            let delivered = engine.counters.epochs != epochs
            // Most TPVs only join their epoch (gpsd sends one per sentence,
            // 17 an epoch from some receivers): nothing to send, save or report.
            if case .fix = input, !delivered, outputs.isEmpty { return }
            perform(outputs)
            if delivered { persistence.fixDelivered(at: clock.now()) }
            return
        }
        let before = engine
        let outputs = engine.handle(input, at: clock.now())
        guard outputs.last == .persist else { return perform(outputs) }
        if let failure = persistence.save(engine.persistentState, at: clock.now()) {
            engine = before
            refuse(token, of: subscriber, ProtocolError(.storageFailed, "\(failure); nothing was changed"))
            return
        }
        perform(outputs, persisted: true)
    }

    func perform(_ outputs: [Engine.Output], persisted: Bool = false) {
        // Durable before anyone hears of it: an acknowledged `pause` must
        // survive a SIGKILL right after the reply.
        // Matched, not compared: `==` copied the last output (a fix) to compare.
        if !persisted, case .persist? = outputs.last { persistState() }
        var departed: [(SubscriberID, ClientServer.Departure)] = []
        // Sinks that write a journal (an fsync) hear the step only after
        // every socket write of it (DESIGN §8: a journal write never delays
        // the socket deliveries of the same epoch).
        var afterSockets: [(Sink, Engine.Event)] = []
        for output in outputs {
            switch output {
            case .send(let ids, let event):
                // Encoded once, shared by every recipient's queue; not at all
                // when only sinks hear it.
                var encoded: (bytes: [UInt8], stream: OutboundQueue.CoalescingKey?)?
                for id in ids {
                    if let client = server.clients[id] {
                        if encoded == nil { encoded = (ServerEncoder.event(event), Daemon.stream(of: event)) }
                        if let departure = deliver(encoded!.bytes, stream: encoded!.stream, to: client) {
                            departed.append((id, departure))
                        }
                    } else if let sink = features.sink(of: id) {
                        if sink.phase == .withSockets {
                            sink.receive(event)
                        } else {
                            afterSockets.append((sink, event))
                        }
                    }
                }
            case .reply(let subscriber, let token, let result):
                guard let request = inFlight.requests.removeValue(forKey: token),
                    let client = server.clients[subscriber], request.client == subscriber
                else { continue }
                if let departure = deliver(ServerEncoder.reply(id: request.id, result), to: client) {
                    departed.append((subscriber, departure))
                }
            case .watch(let enabled):
                source.current?.setWatch(enabled)
            case .armTimer(let deadline):
                arm(deadline)
            case .persist:
                break  // done above
            }
        }
        for (sink, event) in afterSockets { sink.receive(event) }
        for (id, departure) in departed { depart(id, departure) }
        service.statusChanged()
    }

    /// The coalescing stream of an event (docs/protocol.md: slow readers),
    /// hashed once per output rather than compared as text per recipient.
    static func stream(of event: Engine.Event) -> OutboundQueue.CoalescingKey? {
        event.coalescingKey?.hashValue
    }

    func depart(_ id: SubscriberID, _ departure: ClientServer.Departure) {
        server.depart(id, departure)
    }

    /// Sends bytes to a client through the server (`ClientServer.send`).
    /// Returns how the client leaves, if writing showed it must; the caller
    /// departs it once its own step is done.
    func deliver(
        _ bytes: [UInt8], stream: OutboundQueue.CoalescingKey? = nil, to client: ClientConnection
    ) -> ClientServer.Departure? {
        switch server.send(bytes, stream: stream, to: client) {
        case .coalesced:
            counters.eventsCoalesced += 1
            return nil
        case .mustLeave(let departure):
            return departure
        case .written, .queued, .notConnected:
            return nil
        }
    }

    func arm(_ deadline: Instant?) {
        lifecycle.engineTimer?.schedule(at: deadline, leeway: 0.005)
    }
}

extension Engine.Request {
    /// Whether the engine may answer it with `.persist` (DESIGN §2: pause,
    /// resume and authorization answers survive a restart).
    fileprivate var changesDurableState: Bool {
        switch self {
        case .pause, .resume, .requestAuthorization: true
        default: false
        }
    }
}
