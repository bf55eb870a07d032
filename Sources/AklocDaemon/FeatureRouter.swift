import AklocCore
import AklocFeature
import AklocPosix
import AklocProtocol
import AklocSystemd
import Dispatch

/// The daemon as features see it (`FeatureHost`): one table of the engine
/// subscribers features own, with their sinks, the facts features post for
/// each other, and the features themselves. The daemon routes an engine
/// output to a socket client or to a sink by this table, and never asks
/// which feature a subscriber belongs to.
///
/// Confinement: the daemon's queue; every call enters the daemon with
/// `assumeIsolated`.
final class FeatureRouter: FeatureHost {
    struct Subscriber {
        var peer: FeaturePeer
        var sink: Sink
    }

    /// Set by the daemon's start; the router lives as long as the daemon.
    weak var daemon: Daemon?
    let clock: any ShellClock
    let queue: DispatchQueue
    let stateDirectory: String?
    private let logger: Logger
    /// Every feature subscriber, by engine id.
    private(set) var subscribers: [SubscriberID: Subscriber] = [:]
    /// The list the features are made from (`FeaturePlug.all`).
    let plugs: [FeaturePlug]
    /// The features, in the daemon's list order.
    private(set) var features: [PluggedFeature] = []
    private var facts: [ObjectIdentifier: Any] = [:]
    private var observers: [ObjectIdentifier: [(Any) -> Void]] = [:]

    init(plugs: [FeaturePlug], queue: DispatchQueue, clock: any ShellClock, stateDirectory: String?, logger: Logger) {
        self.plugs = plugs
        self.queue = queue
        self.clock = clock
        self.stateDirectory = stateDirectory
        self.logger = logger
    }

    /// Makes each plug's feature from its config section (those the
    /// settings leave off are not made), in list order.
    func plug(_ configuration: Configuration) -> [any Component] {
        features = plugs.compactMap { $0.make(configuration, self) }
        return features.map(\.component)
    }

    var logsDebug: Bool { logger.minimumLevel == .debug }

    /// The running feature of a type (tests, and nothing in the daemon).
    func feature<F: Feature>(_ type: F.Type) -> F? {
        features.lazy.compactMap { $0.component as? F }.first
    }

    func sink(of id: SubscriberID) -> Sink? { subscribers[id]?.sink }

    /// The root-equivalent subscribers (not users reached another way),
    /// which `status` and STATUS= do not count as clients.
    var daemonSubscriberCount: Int { subscribers.values.count { $0.peer == .daemon } }

    /// Enters the daemon, which the caller is on the queue of (what
    /// `Daemon.onQueue` does, for a closure that captures this router).
    private func inDaemon<T>(_ body: (isolated Daemon) -> T) -> T {
        dispatchPrecondition(condition: .onQueue(queue))
        return withoutActuallyEscaping(body) { escapable in
            unsafeBitCast(escapable, to: ((Daemon) -> T).self)(daemon!)
        }
    }

    // MARK: FeatureHost

    func log(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, String>) {
        logger.log(level, message, fields)
    }

    func addSubscriber(_ peer: FeaturePeer, sink: Sink) -> SubscriberID {
        let id = inDaemon { $0.server.reserveID() }
        subscribers[id] = Subscriber(peer: peer, sink: sink)
        inDaemon { daemon in
            switch peer {
            case .daemon:
                daemon.run(.connect(id, Engine.Peer(uid: 0, authorization: .authorizedAlways)))
            case .user(let uid, let gid):
                daemon.sessions.clientArrived(uid: uid)
                daemon.run(
                    .connect(
                        id,
                        Engine.Peer(
                            uid: uid, authorization: daemon.grantedStatus(uid: uid, gid: gid),
                            sessionActive: daemon.sessions.isActive(uid: uid))))
            }
        }
        return id
    }

    func removeSubscriber(_ id: SubscriberID) {
        guard let peer = subscribers.removeValue(forKey: id)?.peer else { return }
        inDaemon { daemon in
            if case .user(let uid, _) = peer { daemon.sessions.clientLeft(uid: uid) }
            daemon.run(.disconnect(id))
        }
    }

    func run(_ input: Engine.Input) {
        inDaemon { $0.run(input) }
    }

    func authorization(uid: UInt32, gid: UInt32) -> AuthorizationStatus {
        inDaemon { $0.grantedStatus(uid: uid, gid: gid) }
    }

    func authorizationStatus(of id: SubscriberID) -> AuthorizationStatus? {
        inDaemon { $0.engine.authorizationStatus(of: id) }
    }

    func mayReceiveLocations(_ id: SubscriberID) -> Bool {
        inDaemon { $0.engine.mayReceiveLocations(id) }
    }

    func visibleLocation(for id: SubscriberID) -> Result<Location?, EngineError> {
        inDaemon { $0.engine.visibleLocation(for: id) }
    }

    func describe(with describer: any LocationDescriber) {
        inDaemon { $0.engine.describer = describer }
    }

    var liveFix: Location? {
        inDaemon { $0.engine.isPaused ? nil : $0.engine.liveFix }
    }

    func post<Fact>(_ fact: Fact) {
        let key = ObjectIdentifier(Fact.self)
        facts[key] = fact
        for observer in observers[key] ?? [] { observer(fact) }
    }

    func observe<Fact>(_ type: Fact.Type, _ handler: @escaping (Fact) -> Void) {
        let key = ObjectIdentifier(Fact.self)
        let erased: (Any) -> Void = { handler($0 as! Fact) }
        observers[key, default: []].append(erased)
        if let fact = facts[key] { erased(fact) }
    }

    // MARK: What the daemon asks of the features

    /// A reload: each feature whose section changed applies it; a feature
    /// the new file turns on or off waits for a restart (said once).
    func apply(_ new: Configuration, previous: Configuration) {
        for plug in plugs where plug.changed(previous, new) {
            let made = features.filter { $0.section == plug.section }
            for feature in made { feature.apply(new) }
            if made.isEmpty {
                logger.log(.notice, "[\(plug.section)] applies at the next restart", [:])
            }
        }
        // D-Bus peers and the like are re-decided like socket clients.
        let users = subscribers.sorted(by: { $0.key < $1.key }).map { ($0.key, $0.value.peer) }
        inDaemon { daemon in
            for (id, peer) in users {
                guard case .user(let uid, let gid) = peer else { continue }
                let status = daemon.grantedStatus(uid: uid, gid: gid)
                if status != daemon.engine.authorizationStatus(of: id) {
                    daemon.run(.authorizationChanged(id, status))
                }
            }
        }
    }

    func report(into status: inout DaemonStatus) {
        for feature in features { feature.report(&status) }
    }

    /// The first feature's answer to an op, nil when none serves it.
    func answer(_ operation: ClientRequest.Operation, id: RequestID?, from client: FeatureClient)
        -> Result<[UInt8], ProtocolError>?
    {
        for feature in features {
            if let answer = feature.answer(operation, id, client) { return answer }
        }
        return nil
    }

    /// The first feature's refusal of an engine request, nil when none refuses.
    func refusal(of request: Engine.Request) -> ProtocolError? {
        for feature in features {
            if let error = feature.refusal(request) { return error }
        }
        return nil
    }

    func clientGone(_ id: SubscriberID) {
        for feature in features { feature.clientGone(id) }
    }
}
