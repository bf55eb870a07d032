import AklocCore
import AklocGPSD
import AklocMQTT
import AklocPosix
import AklocProtocol
import AklocSystemd
import Dispatch

/// The imperative shell (DESIGN §1): one actor whose executor is one serial
/// DispatchQueue owns every piece of mutable daemon state. DispatchSources for
/// the listening socket, clients, gpsd, signals and the engine's timer all fire
/// on that queue and enter the actor with `assumeIsolated`, so there are no
/// locks and Swift 6 checks every access.
actor Daemon {
    nonisolated let executor: QueueExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    nonisolated var queue: DispatchQueue { executor.queue }

    var engine: Engine
    var clients: [SubscriberID: ClientConnection] = [:]
    /// Live connections per uid: the session monitor watches a uid while it has one.
    var clientsPerUID: [UInt32: Int] = [:]
    var nextSubscriberID: SubscriberID = 1
    var nextToken: RequestToken = 1
    /// Requests the engine has not answered yet: who asked, with which wire id.
    var pendingRequests: [RequestToken: (client: SubscriberID, id: RequestID?)] = [:]
    /// The shell's own counters; the engine keeps fixes, epochs and deliveries.
    var counters = ShellCounters()
    var configuration: Configuration
    var authorizer: Authorizer
    var users = UserDatabase()
    let options: DaemonOptions
    let configPath: String?
    let logger: Logger
    let notifier = SystemdNotifier()
    let sessions: any SessionMonitor
    let stateStore: StateStore?
    let startedAt: Instant

    var source: GPSDSource?
    /// The MQTT forwarder and the engine subscriber it is (Daemon+MQTT.swift).
    var forwarder: MQTTForwarder?
    var forwarderID: SubscriberID?
    /// Sees each location just before the forwarder journals it (a test's
    /// window on the order of writes; nil in the daemon).
    var willForward: ((Location) -> Void)?
    var listener: UnixSocket?
    var listenWatch: FileDescriptor.Watch?
    /// The listening source is suspended after a failed accept (see `acceptPending`).
    var acceptSuspended = false
    var activatedSocket = false
    let timer: DispatchSourceTimer
    var watchdogTimer: DispatchSourceTimer?
    var signalSources: [DispatchSourceSignal] = []
    var stopping = false
    var lastServiceStatus = ""
    var serviceStatusPending = false
    var locationSaves = LocationSaveSchedule()
    var locationSaveTimer: DispatchSourceTimer?

    init(
        options: DaemonOptions, configuration: Configuration, configPath: String?, engine: Engine,
        stateStore: StateStore?, sessions: any SessionMonitor, logger: Logger
    ) {
        executor = QueueExecutor(label: "akloc.daemon")
        self.options = options
        self.configuration = configuration
        socketPath = options.socketPath ?? configuration.socket.path
        self.configPath = configPath
        self.stateStore = stateStore
        self.sessions = sessions
        self.logger = logger
        authorizer = Authorizer(rules: configuration.authorization)
        self.engine = engine
        startedAt = SystemClock.monotonicNow()
        timer = DispatchSource.makeTimerSource(queue: executor.queue)
    }

    static func engineConfiguration(_ configuration: Configuration) -> Engine.Configuration {
        Engine.Configuration(
            defaultPolicy: configuration.throttle.policy,
            firstLocationAttempts: configuration.throttle.firstLocationAttempts,
            maxFixAge: configuration.throttle.maxFixAge,
            defaultGrant: Authorizer(rules: configuration.authorization).defaultGrant)
    }

    /// The socket served when not activated; fixed at start, so a reload
    /// that changes `[socket] path` cannot make `stop` unlink another file.
    let socketPath: String

    func log(_ level: Logger.Level, _ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:])
    {
        logger.log(level, message(), fields)
    }

    // MARK: Engine

    /// Feeds one input to the engine and carries out what it decided.
    func run(_ input: Engine.Input) {
        // A request that changes durable state (pause, resume, an answer to
        // requestAuthorization) is acknowledged only once it is on disk; when
        // it cannot be saved (ENOSPC, EROFS) it did not happen: the engine
        // goes back to before it and the requester is told why. Only those
        // keep a copy of the engine: on the fix path a copy would make every
        // mutation of its collections copy them (copy-on-write).
        guard case .request(let subscriber, let token, let request) = input, request.changesDurableState else {
            return perform(engine.handle(input, at: SystemClock.monotonicNow()))
        }
        let before = engine
        let outputs = engine.handle(input, at: SystemClock.monotonicNow())
        guard outputs.last == .persist else { return perform(outputs) }
        if let failure = saveState() {
            engine = before
            refuse(token, of: subscriber, ProtocolError(.storageFailed, "\(failure); nothing was changed"))
            return
        }
        perform(outputs, persisted: true)
    }

    func perform(_ outputs: [Engine.Output], persisted: Bool = false) {
        // Durable before anyone hears of it: an acknowledged `pause` must
        // survive a SIGKILL right after the reply.
        if outputs.last == .persist, !persisted { persistState() }
        var departed: [(SubscriberID, Departure)] = []
        // The forwarder's share is journaled (an fsync) only after every
        // socket write of this step (DESIGN §8: a journal write never delays
        // the socket deliveries of the same epoch).
        var forwarded: [Engine.Event] = []
        for output in outputs {
            switch output {
            case .send(let ids, let event):
                if let forwarderID, ids.contains(forwarderID) { forwarded.append(event) }
                // Encoded once, shared by every recipient's queue.
                let bytes = ServerEncoder.event(event)
                let stream = Daemon.stream(of: event)
                for id in ids {
                    guard let client = clients[id] else { continue }
                    if let departure = deliver(bytes, stream: stream, to: client) { departed.append((id, departure)) }
                }
            case .reply(let subscriber, let token, let result):
                guard let request = pendingRequests.removeValue(forKey: token),
                    let client = clients[subscriber], request.client == subscriber
                else { continue }
                if let departure = deliver(ServerEncoder.reply(id: request.id, result), to: client) {
                    departed.append((subscriber, departure))
                }
            case .watch(let enabled):
                source?.setWatch(enabled)
            case .armTimer(let deadline):
                arm(deadline)
            case .persist:
                break  // done above
            }
        }
        for event in forwarded { forward(event) }
        for (id, departure) in departed { depart(id, departure) }
        updateServiceStatus()
    }

    /// The coalescing stream of an event (docs/protocol.md: slow readers),
    /// hashed once per output rather than compared as text per recipient.
    static func stream(of event: Engine.Event) -> OutboundQueue.StreamKey? {
        event.coalescingKey?.hashValue
    }

    /// Why a client leaves while the daemon writes to it.
    enum Departure: Sendable {
        /// The daemon lets it go (a slow reader past the cap, a failed write).
        case dropped(String)
        /// The peer had already closed (EPIPE, ECONNRESET): an ordinary
        /// disconnect whose end of file the daemon had not read yet, not a drop.
        case closedByPeer
    }

    static func departure(after error: SocketError) -> Departure {
        error.isPeerGone ? .closedByPeer : .dropped("write failed: \(error)")
    }

    func depart(_ id: SubscriberID, _ departure: Departure) {
        switch departure {
        case .dropped(let reason): drop(id, reason: reason)
        case .closedByPeer: disconnect(id, reason: nil)
        }
    }

    /// Queues bytes for a client and writes what the socket takes now.
    /// Returns how the client leaves, if writing showed it must.
    func deliver(_ bytes: [UInt8], stream: OutboundQueue.StreamKey? = nil, to client: ClientConnection) -> Departure? {
        guard !client.isClosed else { return nil }
        // Fast path (most clients, most of the time): nothing is waiting, so
        // write the shared bytes straight away and queue only what the socket
        // did not take. Its write source is already suspended.
        var result = ClientConnection.FlushResult.blocked
        if client.queue.isEmpty {
            let written: Int
            let attempt = bytes.withUnsafeBytes { buffer in
                Result { () throws(SocketError) in try client.socket.write(buffer) }
            }
            switch attempt {
            case .success(let count): written = count
            case .failure(let error): return Daemon.departure(after: error)
            }
            if written == bytes.count { return nil }
            client.queue.enqueueRemainder(of: bytes, written: written, stream: stream)
        } else {
            if client.queue.enqueue(bytes, stream: stream) { counters.eventsCoalesced += 1 }
            result = client.flush()
        }
        switch result {
        case .drained:
            client.stopWaitingForWritable()
        case .blocked:
            if client.queue.queuedBytes > configuration.socket.clientHardLimit {
                return .dropped(
                    "slow reader: \(client.queue.queuedBytes) bytes queued, "
                        + "over the limit of \(configuration.socket.clientHardLimit)")
            }
            let id = client.id
            client.waitForWritable(queue: queue) { [weak self] in
                self?.assumeIsolated { $0.clientWritable(id) }
            }
        case .failed(let error):
            return Daemon.departure(after: error)
        }
        return nil
    }

    func clientWritable(_ id: SubscriberID) {
        guard let client = clients[id] else { return }
        switch client.flush() {
        case .drained: client.stopWaitingForWritable()
        case .blocked: break
        case .failed(let error): depart(id, Daemon.departure(after: error))
        }
    }

    func arm(_ deadline: Instant?) {
        guard let deadline else {
            timer.schedule(deadline: .distantFuture)
            return
        }
        let delay = max(0, deadline.seconds(since: SystemClock.monotonicNow()))
        timer.schedule(deadline: .now() + .nanoseconds(Int(delay * 1e9)), leeway: .milliseconds(5))
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
