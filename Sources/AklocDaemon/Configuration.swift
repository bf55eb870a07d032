import AklocCore
import AklocGeoClue
import AklocGeoService
import AklocMQTT
import AklocProtocol
import AklocTimeline
import AklocTrack

/// aklocd's settings, as read from `akloc.conf` (docs/configuration.md).
/// A plain value: parsing builds a new one, so a failed reload cannot
/// disturb the configuration in use.
public struct Configuration: Hashable, Sendable {
    public static let defaultPath = "/etc/akloc/akloc.conf"

    public var gpsd = GPSD()
    public var throttle = Throttle()
    public var authorization = Authorization()
    public var socket = Socket()
    /// `[mqtt]`: the forwarder to an MQTT broker (docs/mqtt.md).
    public var mqtt = MQTTSettings()
    /// `[track]`: the track recorder (docs/track.md).
    public var track = TrackSettings()
    /// `[timeline]`: what counts as a visit (docs/timeline.md).
    public var timeline = TimelineSettings()
    /// `[geo]`: where the places, borders and time-zone data are (docs/places.md).
    public var geo = GeoSettings()
    /// `[geoclue]`: the GeoClue2 D-Bus front and the NMEA feed (docs/desktop.md).
    public var geoclue = GeoClueSettings()

    public init() {}

    /// `[gpsd]`: where fixes come from.
    public struct GPSD: Hashable, Sendable {
        public var host = "127.0.0.1"
        public var port: UInt16 = 2947
        /// Only this receiver's fixes are used when set (gpsd's device path).
        public var device: String?

        public init() {}

        /// The source as logs and `status` name it, e.g. "gpsd://127.0.0.1:2947".
        public var sourceName: String {
            host.contains(":") ? "gpsd://[\(host)]:\(port)" : "gpsd://\(host):\(port)"
        }
    }

    /// `[throttle]`: the default policy for subscribers, and the first-fix loop.
    public struct Throttle: Hashable, Sendable {
        public var policy = ThrottlePolicy()
        public var firstLocationAttempts = 5
        /// Seconds a fix counts as current for a first-fix attempt.
        public var maxFixAge: Double = 2

        public init() {}
    }

    /// `[authorization]`: who may get locations, and who may administer.
    public struct Authorization: Hashable, Sendable {
        /// How `requestAuthorization` is answered for users without a rule.
        public var defaultRule = AuthorizationRule.whenInUse
        public var adminGroup = "akloc-admin"
        public var rules: [AuthorizationSubject: AuthorizationRule] = [:]

        public init() {}

        /// The rule for a user: their own rule if there is one, else the most
        /// restrictive rule among their groups (so `@group = deny` can shut a
        /// group out), else nil (the default then answers `requestAuthorization`).
        public func rule(forUser user: String, groups: [String]) -> AuthorizationRule? {
            if let own = rules[.user(user)] { return own }
            let groupRules = groups.compactMap { rules[.group($0)] }
            if groupRules.contains(.deny) { return .deny }
            if groupRules.contains(.whenInUse) { return .whenInUse }
            return groupRules.isEmpty ? nil : .always
        }
    }

    /// `[socket]`: where and how clients connect.
    public struct Socket: Hashable, Sendable {
        public var path = DefaultSocket.path
        /// Permission bits of the socket file. Anyone may connect by default:
        /// authorization decides per peer what a connection may see.
        public var mode: UInt32 = 0o666
        /// Bytes queued for one client before it is dropped.
        public var clientHardLimit = 1 << 20

        public init() {}
    }
}
