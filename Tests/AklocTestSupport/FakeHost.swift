import AklocCore
import AklocFeature
import AklocPosix
import Dispatch

/// The daemon as one feature sees it, for that feature's tests, on virtual
/// time (DESIGN §1). It records what the feature does (subscribers with
/// their peer and sink phase, engine inputs, facts, log lines) and lets the
/// test play the engine: deliver events into sinks, say what the rules
/// grant, what the fix is, and post facts.
///
/// Where a feature could tell it from the daemon's `FeatureRouter`, it
/// behaves the same: subscriber ids and socket client ids come from one
/// counter; a feature subscriber is connected to the engine as the router
/// connects it (`.daemon` always authorized, `.user` as `authorization`
/// grants its uid); an input run while a step is carried out (from a sink)
/// is carried out once the step is done; in a step the `.withSockets` sinks
/// hear the events in order and the `.afterSockets` ones after all of them;
/// `observe` gets the latest fact at once; every call must come on `queue`.
///
/// Confinement: `queue`. A test enters it with `sync`; `waitUntil` (off the
/// queue) waits for what a feature does on its own (a reader connecting).
public final class FakeHost: FeatureHost, @unchecked Sendable {
    /// The host's clock, which moves only when the test advances it.
    public let time = ManualClock()
    public var clock: any ShellClock { time }
    public let queue = DispatchQueue(label: "akloc.fake-host")
    public let stateDirectory: String?
    public var logsDebug: Bool

    /// One feature subscriber, as the feature registered it.
    public struct Subscriber {
        public var id: SubscriberID
        public var peer: FeaturePeer
        public var sink: Sink
    }

    /// What the feature did to the subscriber table, in order.
    public enum Change: Hashable, Sendable {
        case added(SubscriberID, FeaturePeer, Sink.Phase)
        case removed(SubscriberID)
    }

    public struct LogLine: Sendable {
        public var level: LogLevel
        public var message: String
        public var fields: [String: String]
    }

    /// The feature's subscribers now, by id.
    public private(set) var subscribers: [SubscriberID: Subscriber] = [:]
    public private(set) var changes: [Change] = []
    /// Every engine input carried out, in order (the router's own `.connect`
    /// and `.disconnect` of feature subscribers included).
    public private(set) var inputs: [Engine.Input] = []
    /// Every fact posted, in order.
    public private(set) var posted: [Any] = []
    public private(set) var lines: [LogLine] = []
    /// What the feature handed the engine to derive the place key paths with.
    public private(set) var describer: (any LocationDescriber)?

    /// What akloc's rules grant a uid (`authorization(uid:gid:)`); others get `defaultGrant`.
    public var grants: [UInt32: AuthorizationStatus] = [:]
    public var defaultGrant = AuthorizationStatus.notDetermined
    /// The newest epoch the engine holds; `liveFix` while `sourceUp` and not `paused`.
    public var fix: Location?
    public var sourceUp = true
    public var paused = false

    /// Each engine subscriber (feature subscribers and the test's socket
    /// clients): its authorization and whether its uid has an active session.
    private var peers: [SubscriberID: (status: AuthorizationStatus, sessionActive: Bool)] = [:]
    private var nextID: SubscriberID = 1
    private var facts: [ObjectIdentifier: Any] = [:]
    private var observers: [ObjectIdentifier: [(Any) -> Void]] = [:]
    private var inStep = false
    private var deferred: [Engine.Input] = []
    /// Signalled whenever something is recorded, for `waitUntil`.
    private let recorded = DispatchSemaphore(value: 0)

    public init(stateDirectory: String? = nil, logsDebug: Bool = false) {
        self.stateDirectory = stateDirectory
        self.logsDebug = logsDebug
    }

    /// Runs `body` on the host's queue, where the feature lives.
    public func sync<T>(_ body: () throws -> T) rethrows -> T {
        try queue.sync(execute: body)
    }

    /// Starts a feature on the queue, as the daemon's list does: its error, if any.
    public func start(_ component: any Component) -> ComponentError? {
        queue.sync { () -> ComponentError? in
            do throws(ComponentError) {
                try component.start()
                return nil
            } catch {
                return error
            }
        }
    }

    /// Waits (off the queue) until `condition`, checked on the queue, holds:
    /// for what a feature does on its own, such as a reader connecting. It
    /// is checked again whenever the host records something, and every
    /// 10 ms for what the host does not see (a feature's own state). False
    /// after `timeout` seconds.
    public func waitUntil(timeout: Double = 10, _ condition: () -> Bool) -> Bool {
        dispatchPrecondition(condition: .notOnQueue(queue))
        let deadline = DispatchTime.now() + timeout
        while !queue.sync(execute: condition) {
            guard DispatchTime.now() < deadline else { return false }
            _ = recorded.wait(timeout: min(deadline, .now() + .milliseconds(10)))
        }
        return true
    }

    // MARK: The test as the engine and the rules

    /// A socket client of the daemon, as a feature's `answer` sees it; the
    /// engine knows it with `status`.
    public func connectClient(
        uid: UInt32 = 1000, gid: UInt32? = nil, status: AuthorizationStatus, sessionActive: Bool = true,
        isAdmin: Bool = false, replyBudget: Int = 1 << 20
    ) -> FeatureClient {
        onQueue()
        let id = reserveID()
        peers[id] = (status, sessionActive)
        return FeatureClient(id: id, uid: uid, gid: gid ?? uid, isAdmin: isAdmin, replyBudget: replyBudget)
    }

    /// A client's status changes (a reload, `authorize`).
    public func setStatus(_ status: AuthorizationStatus, of id: SubscriberID) {
        onQueue()
        peers[id]?.status = status
    }

    /// One engine step whose outputs send `event` to `ids` (in that order):
    /// the sinks among them hear it as the router's table routes it, and
    /// what they run is carried out after the step.
    public func deliver(_ event: Engine.Event, to ids: [SubscriberID]) {
        step {
            var afterSockets: [Sink] = []
            for id in ids {
                guard let sink = subscribers[id]?.sink else { continue }
                if sink.phase == .withSockets {
                    sink.receive(event)
                } else {
                    afterSockets.append(sink)
                }
            }
            for sink in afterSockets { sink.receive(event) }
        }
    }

    public func deliver(_ event: Engine.Event, to id: SubscriberID) {
        deliver(event, to: [id])
    }

    /// A fix delivered to every subscriber that asked for every epoch
    /// (`startUpdating(everyEpoch: true)` last), as the engine's raw stream
    /// sends it; it also becomes `fix`.
    public func deliverEpoch(_ location: Location) {
        fix = location
        deliver(.didUpdateLocation(location, afterTimeInterval: nil), to: everyEpochSubscribers)
    }

    /// Feature subscribers whose last start asked for every epoch.
    public var everyEpochSubscribers: [SubscriberID] {
        subscribers.keys.sorted().filter { startRequest(of: $0)?.everyEpoch == true }
    }

    /// The last `startUpdatingLocation` of a subscriber, unless stopped after it.
    public func startRequest(of id: SubscriberID) -> (policy: ThrottlePolicy.Partial?, everyEpoch: Bool)? {
        var last: (ThrottlePolicy.Partial?, Bool)?
        for case .request(id, _, let request) in inputs {
            switch request {
            case .startUpdatingLocation(let policy, let everyEpoch): last = (policy, everyEpoch)
            case .stopUpdatingLocation: last = nil
            default: break
            }
        }
        return last
    }

    /// The ids the feature added, in order.
    public var added: [SubscriberID] {
        changes.compactMap { if case .added(let id, _, _) = $0 { id } else { nil } }
    }

    public var removed: [SubscriberID] {
        changes.compactMap { if case .removed(let id) = $0 { id } else { nil } }
    }

    public func messages(at level: LogLevel) -> [String] {
        lines.filter { $0.level == level }.map(\.message)
    }

    // MARK: FeatureHost

    public func log(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, String>) {
        onQueue()
        lines.append(LogLine(level: level, message: message, fields: Dictionary(fields.map { ($0, $1) }) { $1 }))
        recorded.signal()
    }

    public func addSubscriber(_ peer: FeaturePeer, sink: Sink) -> SubscriberID {
        onQueue()
        let id = reserveID()
        subscribers[id] = Subscriber(id: id, peer: peer, sink: sink)
        changes.append(.added(id, peer, sink.phase))
        switch peer {
        case .daemon:
            peers[id] = (.authorizedAlways, true)
            run(.connect(id, Engine.Peer(uid: 0, authorization: .authorizedAlways)))
        case .user(let uid, let gid):
            let status = authorization(uid: uid, gid: gid)
            peers[id] = (status, true)
            run(.connect(id, Engine.Peer(uid: uid, authorization: status)))
        }
        return id
    }

    public func removeSubscriber(_ id: SubscriberID) {
        onQueue()
        guard subscribers.removeValue(forKey: id) != nil else { return }
        peers[id] = nil
        changes.append(.removed(id))
        run(.disconnect(id))
    }

    public func run(_ input: Engine.Input) {
        onQueue()
        if inStep {
            deferred.append(input)
            return
        }
        step { record(input) }
    }

    public func authorization(uid: UInt32, gid: UInt32) -> AuthorizationStatus {
        onQueue()
        return grants[uid] ?? defaultGrant
    }

    public func authorizationStatus(of id: SubscriberID) -> AuthorizationStatus? {
        onQueue()
        return peers[id]?.status
    }

    public func mayReceiveLocations(_ id: SubscriberID) -> Bool {
        onQueue()
        return peers[id].map(Self.receivesLocations) ?? false
    }

    public var liveFix: Location? {
        onQueue()
        return sourceUp && !paused ? fix : nil
    }

    public func visibleLocation(for id: SubscriberID) -> Result<Location?, EngineError> {
        onQueue()
        guard let peer = peers[id] else {
            return .failure(EngineError(.badRequest, "subscriber \(id) is not connected"))
        }
        guard peer.status.allowsLocation else {
            return .failure(
                EngineError(.notAuthorized, "location needs authorization (status \(peer.status.rawValue))"))
        }
        return .success(Self.receivesLocations(peer) ? fix : nil)
    }

    public func describe(with describer: any LocationDescriber) {
        onQueue()
        self.describer = describer
        recorded.signal()
    }

    public func post<Fact>(_ fact: Fact) {
        onQueue()
        let key = ObjectIdentifier(Fact.self)
        facts[key] = fact
        posted.append(fact)
        recorded.signal()
        for observer in observers[key] ?? [] { observer(fact) }
    }

    public func observe<Fact>(_ type: Fact.Type, _ handler: @escaping (Fact) -> Void) {
        onQueue()
        let key = ObjectIdentifier(Fact.self)
        let erased: (Any) -> Void = { handler($0 as! Fact) }
        observers[key, default: []].append(erased)
        if let fact = facts[key] { erased(fact) }
    }

    // MARK: Private

    private func onQueue() { dispatchPrecondition(condition: .onQueue(queue)) }

    private func reserveID() -> SubscriberID {
        defer { nextID += 1 }
        return nextID
    }

    /// The engine's rule (`receivesLocations`): always, or when in use with an active session.
    private static func receivesLocations(_ peer: (status: AuthorizationStatus, sessionActive: Bool)) -> Bool {
        switch peer.status {
        case .authorizedAlways: true
        case .authorizedWhenInUse: peer.sessionActive
        case .notDetermined, .denied: false
        }
    }

    /// Carries out one step, then what was run during it, each whole and in order.
    private func step(_ body: () -> Void) {
        precondition(!inStep, "a step inside a step: the daemon never nests them")
        inStep = true
        body()
        while !deferred.isEmpty { record(deferred.removeFirst()) }
        inStep = false
    }

    private func record(_ input: Engine.Input) {
        inputs.append(input)
        recorded.signal()
    }
}
