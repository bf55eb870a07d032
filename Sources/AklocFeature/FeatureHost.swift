import AklocCore
import AklocPosix
import Dispatch

/// All a feature sees of the daemon (DESIGN §1): engine subscribers of its
/// own with a sink, engine inputs, the clock, the log, and facts other
/// features post. The daemon implements it; each feature's tests implement
/// it too, on virtual time. Confined to the daemon's queue.
public protocol FeatureHost: AnyObject {
    var clock: any ShellClock { get }
    /// The daemon's queue, for a feature's descriptor watches.
    var queue: DispatchQueue { get }
    /// Where features keep their files (`/var/lib/akloc`); nil when the
    /// daemon keeps nothing on disk (an embedded test's).
    var stateDirectory: String? { get }

    func log(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, String>)
    /// Whether debug lines are kept: a feature builds per-fix lines only then.
    var logsDebug: Bool { get }

    /// A new engine subscriber whose events go to `sink`: `.daemon` is
    /// root-equivalent (the administrator configured the feature), `.user`
    /// is decided by akloc's rules like a socket client of that uid.
    func addSubscriber(_ peer: FeaturePeer, sink: Sink) -> SubscriberID
    /// The subscriber leaves the engine; its sink hears nothing more.
    func removeSubscriber(_ id: SubscriberID)
    /// One engine input (a request of one of the feature's own subscribers,
    /// a region event…). Called from a sink, it runs once the current step
    /// is done, so every step is carried out whole and in order.
    func run(_ input: Engine.Input)

    /// What akloc's rules give `uid` now, with `[authorization] default`
    /// standing in for an answer it was never asked (peers such as D-Bus
    /// clients cannot ask).
    func authorization(uid: UInt32, gid: UInt32) -> AuthorizationStatus
    /// The engine's status for one subscriber (nil when unknown).
    func authorizationStatus(of id: SubscriberID) -> AuthorizationStatus?
    /// Whether the subscriber may be told a position now.
    func mayReceiveLocations(_ id: SubscriberID) -> Bool
    /// The newest epoch while the source is up and not paused.
    var liveFix: Location? { get }
    /// The current fix as one client may see it now (nil: none yet), or why not.
    func visibleLocation(for id: SubscriberID) -> Result<Location?, EngineError>
    /// Gives the engine what derives `myPlacemark`, `country` and
    /// `timeZone` from a fix (the geo feature's lookups).
    func describe(with describer: any LocationDescriber)

    /// Posts a fact for other features (the shared saved places…), kept as
    /// the latest of its type, as a retained message is.
    func post<Fact>(_ fact: Fact)
    /// `handler` gets the latest fact of the type at once if there is one,
    /// then each one posted.
    func observe<Fact>(_ type: Fact.Type, _ handler: @escaping (Fact) -> Void)
}

extension FeatureHost {
    public func log(_ level: LogLevel, _ message: String) { log(level, message, [:]) }

    /// Starts (or re-policies) one of the feature's subscribers; the
    /// engine's reply has no requester, so the host drops it.
    public func startUpdating(_ id: SubscriberID, policy: ThrottlePolicy.Partial?, everyEpoch: Bool) {
        run(.request(id, 0, .startUpdatingLocation(policy: policy, everyEpoch: everyEpoch)))
    }
}

/// Who a feature's subscriber is, to the engine.
public enum FeaturePeer: Sendable, Hashable {
    /// Root-equivalent, always authorized (MQTT, the track, the NMEA feed).
    case daemon
    /// A local user reached another way than the socket (a D-Bus client).
    case user(uid: UInt32, gid: UInt32)
}
