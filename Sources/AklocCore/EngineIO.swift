// The engine's contract with the imperative shell (DESIGN §1). The daemon
// feeds `Engine.Input`s with the current monotonic `Instant` and carries out
// the returned `Engine.Output`s; the engine itself does no I/O.

/// One connection to the daemon. Assigned by the shell, never reused while the
/// daemon runs.
public typealias SubscriberID = UInt64

/// Opaque handle for a request, chosen by the shell (which maps it back to
/// the JSON `id`); echoed in the matching reply.
public typealias RequestToken = UInt64

public enum AuthorizationStatus: String, Hashable, Sendable, Codable, CaseIterable {
    case notDetermined
    case denied
    case authorizedWhenInUse
    case authorizedAlways

    /// Whether this status may receive locations at all.
    public var allowsLocation: Bool { self == .authorizedWhenInUse || self == .authorizedAlways }
}

/// What `requestAuthorization` asks for, and what a config rule grants.
public enum AuthorizationRequestType: String, Hashable, Sendable, Codable {
    case whenInUse
    case always
}

/// The `didGetNotification` vocabulary: AKLocationManager's notifications plus
/// the daemon's own lifecycle events.
public enum Notification: String, Hashable, Sendable, Codable, CaseIterable {
    case locationManagerNotAuthorized
    case userAuthorizationDenied
    case userAuthorizedAlways
    case userAuthorizedWhenInUse
    case authorizationDenied
    case authorizedAlways
    case authorizedWhenInUse
    case appInBackground
    case appActive
    case paused
    case resumed
    case sourceConnected
    case sourceDisconnected
    case daemonStopping
}

/// The `didGetError` vocabulary.
public enum LocationError: String, Hashable, Sendable, Codable {
    case locationManagerCantDetectFirstLocation
}

/// The daemon's state as the `state` key path reports it.
public enum ServiceState: String, Hashable, Sendable, Codable {
    case searching
    case running
    case paused
    case sourceUnavailable
}

extension Engine {
    public enum Input: Sendable {
        /// A TPV with mode >= 2, already checked and converted. Its receipt
        /// time is the `now` passed with it.
        case fix(Location)
        /// A TPV with mode 0 or 1 (the receiver is talking but has no fix).
        case noFix(device: String?)
        /// The source (gpsd) connection came up; `name` is e.g. "gpsd://127.0.0.1:2947".
        case sourceConnected(name: String)
        case sourceDisconnected
        /// The timer armed by the last `.armTimer` fired (early or late ticks are harmless).
        case tick
        /// A client connected with the status its credentials and the config give it.
        case connect(SubscriberID, Peer)
        case disconnect(SubscriberID)
        case request(SubscriberID, RequestToken, Request)
        /// A reload (or `authorize`) changed this live client's status.
        case authorizationChanged(SubscriberID, AuthorizationStatus)
        /// A login-session change for a uid (lifecycle, DESIGN §2).
        case sessionChanged(uid: UInt32, active: Bool)
        /// The daemon is stopping: every client gets `daemonStopping`.
        case stopping
        /// The shell monitors saved places for this subscriber (or stopped):
        /// it then needs fixes, so the gpsd watch stays open (DESIGN §9).
        case monitoringChanged(SubscriberID, Bool)
        /// The shell's region monitor for this subscriber saw the epoch
        /// cross these places (each told as an event, in order) and put it
        /// inside `inside`: the `regions` key path's new value.
        case regionsChanged(SubscriberID, [String], crossed: [RegionCrossing] = [])
        /// A SKY report from the selected receiver: the `satellites` key path's value.
        case sky(SkyView)
        /// The timeline's detector saw a visit begin (`departed` false: the
        /// `visit` key path's new value) or end (the key path becomes null);
        /// `visit` is its wire object, told as `didVisit` (DESIGN §15).
        case visited(visit: [UInt8], departed: Bool)
        /// A reload made this client an admin or took it away: admins may
        /// read history (`visit`, `didVisit`) whatever their authorization.
        case adminChanged(SubscriberID, Bool)
    }

    public struct Peer: Hashable, Sendable {
        public var uid: UInt32
        public var authorization: AuthorizationStatus
        /// Whether the uid has an active login session (true where logind is absent).
        public var sessionActive: Bool
        /// Root or the admin group: may read history (the `visit` key path).
        public var isAdmin: Bool

        public init(
            uid: UInt32, authorization: AuthorizationStatus, sessionActive: Bool = true, isAdmin: Bool = false
        ) {
            self.uid = uid
            self.authorization = authorization
            self.sessionActive = sessionActive
            self.isAdmin = isAdmin
        }
    }

    public enum Request: Sendable {
        /// Delegate-style updates; `policy` nil means the connection's default,
        /// and members a partial policy leaves out come from that default.
        /// `everyEpoch` also sends each epoch unthrottled (CoreLocation's own
        /// `didUpdateLocation`), which AKLocationManager always did; off by default.
        case startUpdatingLocation(policy: ThrottlePolicy.Partial?, everyEpoch: Bool)
        case stopUpdatingLocation
        case observe(KeyPath, initial: Bool, old: Bool, policy: ThrottlePolicy.Partial?)
        case unobserve(KeyPath)
        case get(KeyPath)
        /// One fresh location, forced past the throttle; fails with `.timeout`
        /// after `timeout` seconds.
        case requestLocation(timeout: Double)
        case requestAuthorization(AuthorizationRequestType)
        /// The connection's default policy for later starts and observations;
        /// members left out keep their value from the current default.
        case configure(ThrottlePolicy.Partial)
        /// `didVisit` events from now on (CoreLocation's
        /// `startMonitoringVisits`), or no more.
        case startMonitoringVisits
        case stopMonitoringVisits
        /// Admin requests: the shell checks the peer is allowed before sending them.
        case pause
        case resume
    }

    public enum Output: Sendable, Equatable {
        /// The same event for every listed subscriber: the shell encodes it once.
        case send([SubscriberID], Event)
        case reply(SubscriberID, RequestToken, Result<Reply, EngineError>)
        /// Whether the shell should keep a gpsd watch open.
        case watch(Bool)
        /// The next `.tick` wanted; `nil` means no timer is needed.
        case armTimer(Instant?)
        /// Durable state changed (paused flag, last location or an
        /// authorization decision): the shell should persist `engine.persistentState`.
        case persist
    }

    public enum Event: Sendable, Hashable {
        case didGetFirstLocation(Location)
        /// `afterTimeInterval` is nil for the every-epoch `rawLocation` stream,
        /// and the real elapsed seconds since the previous delivery otherwise.
        case didUpdateLocation(Location, afterTimeInterval: Double?)
        case didGetError(LocationError)
        case didGetNotification(Notification)
        case change(keyPath: KeyPath, new: KeyPathValue, old: KeyPathValue?)
        /// `didEnterRegion` or `didExitRegion`.
        case didCrossRegion(RegionCrossing)
        /// A visit began (no departure) or ended (the same visit with its
        /// departure): its wire object, as CoreLocation's `didVisit`.
        case didVisit([UInt8])
    }

    public enum Reply: Sendable, Hashable {
        case done
        case value(KeyPathValue)
        case location(Location)
        case authorization(AuthorizationStatus)
    }
}

/// Errors the engine answers requests with. `code` is the stable wire code.
public typealias EngineError = CodedError<EngineErrorCode>

/// The stable codes of `EngineError`, each one of the wire's.
public enum EngineErrorCode: String, CodedErrorCode {
    case notAuthorized
    case unknownKeyPath
    case badRequest
    case timeout
    case unavailable
}

/// What survives a restart (DESIGN §5); the shell stores it atomically.
public struct PersistentState: Hashable, Sendable, Codable {
    public var paused: Bool
    public var lastLocation: Location?
    /// Answers to `requestAuthorization`, per uid.
    public var authorizationDecisions: [UInt32: AuthorizationStatus]

    public init(
        paused: Bool = false, lastLocation: Location? = nil,
        authorizationDecisions: [UInt32: AuthorizationStatus] = [:]
    ) {
        self.paused = paused
        self.lastLocation = lastLocation
        self.authorizationDecisions = authorizationDecisions
    }
}
