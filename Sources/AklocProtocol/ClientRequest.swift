import AklocCore
import AklocJSON

/// What a config rule (and the admin `authorize` op) grants a user or group.
public enum AuthorizationRule: String, Hashable, Sendable, CaseIterable {
    case always
    case whenInUse
    case deny

    /// Accepts the wire values and the CLI spelling `when-in-use`.
    public init?(wire text: String) {
        if text == "when-in-use" {
            self = .whenInUse
        } else {
            self.init(rawValue: text)
        }
    }
}

/// One request line from a client, decoded.
public struct ClientRequest: Sendable, Equatable {
    /// Nil when the request had no `id` (or `"id":null`); the reply then
    /// carries `"id":null`.
    public var id: RequestID?
    public var operation: Operation

    public init(id: RequestID?, operation: Operation) {
        self.id = id
        self.operation = operation
    }

    public enum Operation: Sendable, Equatable {
        /// Everything the engine answers.
        case engine(Engine.Request)
        /// Daemon status: answered by the shell with a `DaemonStatus`.
        case status
        /// Admin: re-read the config file.
        case reload
        /// Admin: rewrite the rule for `subject` (a user name or `@group`) and reload.
        case authorize(subject: String, rule: AuthorizationRule)
        /// Recorded track points, a page at a time (`always` clients and admins).
        case track(TrackQuery)
        /// Admin: forget the recorded track before a time (all of it when nil).
        case clearTrack(before: FixTime?)
        /// Admin: one step of importing a track file (docs/track.md).
        case importTrack(TrackImportRequest)
        /// Visits computed from the track (`always` clients and admins).
        case visits(TimelineQuery)
        /// Trips between visits, computed from the track (as `visits`).
        case trips(TimelineQuery)
        /// Places, countries and time zones (GeoRequest.swift).
        case geo(GeoRequest)
        /// Saved places and regions (DESIGN §9), answered by the shell.
        case places(PlacesRequest)

        /// The wire `op` name.
        public var name: String {
            switch self {
            case .status: "status"
            case .reload: "reload"
            case .authorize: "authorize"
            case .track: "track"
            case .clearTrack: "clearTrack"
            case .importTrack: "importTrack"
            case .visits: "visits"
            case .trips: "trips"
            case .geo(let request): request.name
            case .places(let request): request.name
            case .engine(let request):
                switch request {
                case .startUpdatingLocation: "startUpdatingLocation"
                case .stopUpdatingLocation: "stopUpdatingLocation"
                case .observe: "observe"
                case .unobserve: "unobserve"
                case .get: "get"
                case .requestLocation: "requestLocation"
                case .requestAuthorization: "requestAuthorization"
                case .configure: "configure"
                case .startMonitoringVisits: "startMonitoringVisits"
                case .stopMonitoringVisits: "stopMonitoringVisits"
                case .pause: "pause"
                case .resume: "resume"
                }
            }
        }

        /// Whether only root or the admin group may send it (DESIGN §2).
        public var isAdmin: Bool {
            switch self {
            case .reload, .authorize, .clearTrack, .importTrack, .engine(.pause), .engine(.resume): true
            default: false
            }
        }

        public static func == (lhs: Operation, rhs: Operation) -> Bool {
            switch (lhs, rhs) {
            case (.status, .status), (.reload, .reload): true
            case (.authorize(let s1, let r1), .authorize(let s2, let r2)): s1 == s2 && r1 == r2
            case (.engine(let a), .engine(let b)): sameRequest(a, b)
            case (.track(let a), .track(let b)): a == b
            case (.clearTrack(let a), .clearTrack(let b)): a == b
            case (.importTrack(let a), .importTrack(let b)): a == b
            case (.visits(let a), .visits(let b)), (.trips(let a), .trips(let b)): a == b
            case (.geo(let a), .geo(let b)): a == b
            case (.places(let a), .places(let b)): a == b
            default: false
            }
        }
    }

    /// Every op name a client may send.
    public static let operationNames =
        [
            "observe", "unobserve", "get", "startUpdatingLocation", "stopUpdatingLocation", "requestLocation",
            "requestAuthorization", "configure", "status", "pause", "resume", "reload", "authorize",
            "reverseGeocode", "searchPlaces", "countries", "track", "clearTrack", "importTrack", "visits", "trips",
            "startMonitoringVisits", "stopMonitoringVisits",
        ] + PlacesRequest.operationNames

    /// `requestLocation` waits this long when the request names no `timeout`.
    public static let defaultRequestLocationTimeout: Double = 10
    /// The longest `timeout` accepted, seconds.
    public static let maxRequestLocationTimeout: Double = 3600
}

private func sameRequest(_ a: Engine.Request, _ b: Engine.Request) -> Bool {
    switch (a, b) {
    case (.startUpdatingLocation(let p1, let e1), .startUpdatingLocation(let p2, let e2)):
        p1 == p2 && e1 == e2
    case (.stopUpdatingLocation, .stopUpdatingLocation), (.pause, .pause), (.resume, .resume),
        (.startMonitoringVisits, .startMonitoringVisits), (.stopMonitoringVisits, .stopMonitoringVisits):
        true
    case (.observe(let k1, let i1, let o1, let p1), .observe(let k2, let i2, let o2, let p2)):
        k1 == k2 && i1 == i2 && o1 == o2 && p1 == p2
    case (.unobserve(let k1), .unobserve(let k2)), (.get(let k1), .get(let k2)):
        k1 == k2
    case (.requestLocation(let t1), .requestLocation(let t2)):
        t1 == t2
    case (.requestAuthorization(let t1), .requestAuthorization(let t2)):
        t1 == t2
    case (.configure(let p1), .configure(let p2)):
        p1 == p2
    default:
        false
    }
}

// MARK: - Client-side encoding

extension ClientRequest {
    /// The request as one wire line, ending in "\n".
    public func encodedLine() -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writer.byte(UInt8(ascii: "{"))
        if let id {
            writer.key("id")
            writer.value(id.json)
            writer.byte(UInt8(ascii: ","))
        }
        writer.key("op")
        writer.string(operation.name)
        switch operation {
        case .status, .reload:
            break
        case .authorize(let subject, let rule):
            writer.raw(",\"subject\":")
            writer.string(subject)
            writer.raw(",\"status\":")
            writer.string(rule.rawValue)
        case .track(let query):
            writeTrackQuery(query, to: &writer)
        case .clearTrack(let before):
            writeClearTrack(before: before, to: &writer)
        case .importTrack(let request):
            writeTrackImport(request, to: &writer)
        case .visits(let query), .trips(let query):
            writeTimelineQuery(query, to: &writer)
        case .geo(let request):
            request.write(to: &writer)
        case .places(let request):
            request.write(to: &writer)
        case .engine(let request):
            switch request {
            case .startUpdatingLocation(let policy, let everyEpoch):
                if let policy {
                    writer.raw(",\"policy\":")
                    writePolicy(policy, to: &writer)
                }
                if everyEpoch { writer.raw(",\"everyEpoch\":true") }
            case .stopUpdatingLocation, .pause, .resume, .startMonitoringVisits, .stopMonitoringVisits:
                break
            case .observe(let keyPath, let initial, let old, let policy):
                writer.raw(",\"keyPath\":")
                writer.string(keyPath.description)
                if initial || old {
                    writer.raw(",\"options\":[")
                    if initial { writer.raw("\"initial\"") }
                    if initial && old { writer.byte(UInt8(ascii: ",")) }
                    if old { writer.raw("\"old\"") }
                    writer.byte(UInt8(ascii: "]"))
                }
                if let policy {
                    writer.raw(",\"policy\":")
                    writePolicy(policy, to: &writer)
                }
            case .unobserve(let keyPath), .get(let keyPath):
                writer.raw(",\"keyPath\":")
                writer.string(keyPath.description)
            case .requestLocation(let timeout):
                writer.raw(",\"timeout\":")
                writer.number(timeout)
            case .requestAuthorization(let type):
                writer.raw(",\"type\":")
                writer.string(type.rawValue)
            case .configure(let policy):
                writer.raw(",\"policy\":")
                writePolicy(policy, to: &writer)
            }
        }
        writer.raw("}\n")
        return writer.bytes
    }
}

/// The members a partial policy gives, and no others: the daemon fills the rest.
func writePolicy(_ policy: ThrottlePolicy.Partial, to writer: inout JSONWriter) {
    writer.byte(UInt8(ascii: "{"))
    var first = true
    for (name, value) in [
        ("updateSpeed", policy.updateSpeed), ("minInterval", policy.minInterval),
        ("maxInterval", policy.maxInterval), ("distanceFilter", policy.distanceFilter),
        ("desiredAccuracy", policy.desiredAccuracy),
    ] {
        guard let value else { continue }
        if !first { writer.byte(UInt8(ascii: ",")) }
        first = false
        writer.key(name)
        writer.number(value)
    }
    writer.byte(UInt8(ascii: "}"))
}
