import AklocCore
import AklocPosix
import AklocProtocol

/// A capability that plugs into the daemon (DESIGN §1): one type in its own
/// module, made from its config section and the host, started in the
/// daemon's list order and stopped in reverse. The daemon never names it;
/// adding a feature is its module and one line in that list.
public protocol Feature: Component, SendableMetatype {
    /// Its config section, as parsed (`MQTTSettings`, `TrackSettings`…).
    associatedtype Settings: Hashable & Sendable

    /// The feature as the settings have it, or nil when they leave it off.
    static func make(_ settings: Settings, host: any FeatureHost) -> Self?

    /// A reload with this section: apply what can change while running,
    /// log what waits for a restart. Called only when the section changed.
    func apply(_ settings: Settings)

    /// Its share of `status`.
    func report(into status: inout DaemonStatus)

    /// The client ops it answers (nil: not its op): the reply line, or the
    /// error the host answers with (and counts). Admin-only ops are refused
    /// by the host before they get here.
    func answer(_ operation: ClientRequest.Operation, id: RequestID?, from client: FeatureClient)
        -> Result<[UInt8], ProtocolError>?

    /// A socket client left: forget what the feature kept for it.
    func clientGone(_ id: SubscriberID)

    /// An engine request the feature knows cannot be served (a derived key
    /// path without the geo data): the error it is answered with.
    func refusal(of request: Engine.Request) -> ProtocolError?
}

extension Feature {
    public func apply(_ settings: Settings) {}
    public func report(into status: inout DaemonStatus) {}
    public func answer(_ operation: ClientRequest.Operation, id: RequestID?, from client: FeatureClient)
        -> Result<[UInt8], ProtocolError>?
    { nil }
    public func clientGone(_ id: SubscriberID) {}
    public func refusal(of request: Engine.Request) -> ProtocolError? { nil }
}

/// The socket client an op came from, as far as a feature needs to know.
public struct FeatureClient: Sendable, Hashable {
    public var id: SubscriberID
    public var uid: UInt32
    public var gid: UInt32
    /// Root or the admin group.
    public var isAdmin: Bool
    /// The reply budget: half the client's hard limit, so a reply fits its
    /// queue even when the socket takes none of it at once.
    public var replyBudget: Int

    public init(id: SubscriberID, uid: UInt32, gid: UInt32, isAdmin: Bool, replyBudget: Int) {
        self.id = id
        self.uid = uid
        self.gid = gid
        self.isAdmin = isAdmin
        self.replyBudget = replyBudget
    }
}
