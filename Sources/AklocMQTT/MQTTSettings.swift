import AklocCore

/// `[mqtt]` in akloc.conf (docs/configuration.md, docs/mqtt.md): where the
/// forwarder publishes, as whom, how often, and how much it may hold back
/// while the broker is out of reach. A plain value; the config parser
/// validates every member before building one.
public struct MQTTSettings: Hashable, Sendable {
    public var enabled = false
    /// The broker's nodes, in the order they are tried: one broker, or the
    /// nodes of one cluster (docs/mqtt.md, "Clusters and failover"). Never
    /// empty; a node without a port uses `port`.
    public var hosts: [HostPort] = [HostPort(host: "localhost")]
    /// The port of the nodes that name none; nil means 1883, or 8883 with TLS.
    public var port: UInt16?
    public var tls = false
    /// PEM CA bundle that signs the broker's certificate; with `tls` and no
    /// `cafile`, the system's trust store is used.
    public var caFile: String?
    /// Client certificate and key, for brokers that require one (both or neither).
    public var certFile: String?
    public var keyFile: String?
    public var username: String?
    public var password: String?
    /// A file whose first line is the password, so akloc.conf can stay readable.
    public var passwordFile: String?
    /// nil means `akloc-<device>`, stable across restarts.
    public var clientID: String?
    /// OwnTracks `<user>` and `<device>`; nil means the daemon's user and the host name.
    public var user: String?
    public var device: String?
    /// nil means `owntracks/<user>/<device>`.
    public var topic: String?
    /// OwnTracks tracker id; nil means the last two characters of the device.
    public var tid: String?
    public var qos: Int = 1
    /// Locations published retained, as OwnTracks apps do, so a consumer
    /// that subscribes later gets each device's last position at once.
    public var retain = true
    /// Seconds between MQTT PINGREQs when idle.
    public var keepalive: Int = 60
    /// The forwarder's own throttle: one fix every 30 s while moving, one
    /// every 5 minutes while still, like OwnTracks' "significant" mode.
    public var policy: ThrottlePolicy = {
        var policy = ThrottlePolicy()
        policy.minInterval = 30
        policy.maxInterval = 300
        return policy
    }()
    public var limits = ForwardQueue.Limits()
    /// Fixes a second at most, so a backlog drains without flooding the
    /// consumer (`drain-rate`); nil for no limit.
    public var drainRate: Double?
    /// `protocol`: MQTT 5 when the broker speaks it, else 3.1.1 (auto), or pinned.
    public var protocolSetting: MQTTProtocolChoice.Setting = .auto
    /// `expire`, seconds: with MQTT 5 each fix carries what is left of it
    /// as its message expiry (the broker drops it from offline consumers'
    /// queues then), and it bounds the queue's age like `max-age`, counted
    /// as `expired`. nil:
    /// fixes do not expire at the broker.
    public var expire: Double?

    /// The queue's limits, `expire` bounding the age too: a fix the broker
    /// would drop is of no use queued.
    public var queueLimits: ForwardQueue.Limits {
        var limits = self.limits
        limits.expire = expire
        return limits
    }

    /// The MQTT 5 session's expiry interval: as long as a fix may wait.
    public var sessionExpiry: UInt32 {
        UInt32(min(Double(UInt32.max - 1), (expire ?? limits.maxAge).rounded(.up)))
    }
    /// The OwnTracks commands carried out from `<topic>/cmd`; none by default.
    public var commands: Set<OwnTracksCommand.Action> = []
    /// Whose places `setWaypoints` adds or replaces (a uid; root by default).
    public var placesOwner: UInt32 = 0

    public init() {}

    /// The port in use when none is configured.
    public var effectivePort: UInt16 { port ?? (tls ? 8883 : 1883) }

    /// `hosts`, each with the port it is reached on.
    public var nodes: [HostPort] {
        hosts.map { HostPort(host: $0.host, port: $0.port ?? effectivePort) }
    }

    /// What the OwnTracks names resolve to on this host.
    public struct Identity: Hashable, Sendable {
        public var user: String
        public var device: String
        public var topic: String
        public var tid: String
        public var clientID: String
    }

    /// Fills in the defaults from the host's user and host name.
    public func identity(hostUser: String, hostName: String) -> Identity {
        let user = self.user ?? MQTTSettings.topicLevel(hostUser, fallback: "akloc")
        let device = self.device ?? MQTTSettings.topicLevel(hostName, fallback: "aklocd")
        let topic = self.topic ?? "owntracks/\(user)/\(device)"
        let tid = self.tid ?? String(device.suffix(2))
        return Identity(user: user, device: device, topic: topic, tid: tid, clientID: clientID ?? "akloc-\(device)")
    }

    /// `name` usable as one topic level: MQTT's `/`, `+`, `#` and NUL, and
    /// spaces, become `-` (a host name rarely has any, a user name never should).
    static func topicLevel(_ name: String, fallback: String) -> String {
        let cleaned = String(
            name.map { character -> Character in
                "/+# \t\0".contains(character) ? "-" : character
            })
        return cleaned.isEmpty ? fallback : cleaned
    }

    /// Whether `topic` may be published to: non-empty, no wildcards, no NUL,
    /// at most 65535 bytes (MQTT's string limit).
    public static func isValidTopic(_ topic: String) -> Bool {
        !topic.isEmpty && topic.utf8.count <= 65535 && !topic.contains(where: { "+#\0".contains($0) })
    }
}
