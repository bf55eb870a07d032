import AklocCore
import AklocFeature
import AklocGeo
import AklocPosix
import AklocProtocol

/// `[mqtt]` as a feature (docs/mqtt.md): one engine subscriber with the
/// section's own throttle policy whose deliveries are forwarded as
/// OwnTracks locations (journaled, so its sink runs after the step's socket
/// writes), the shared saved places published as `waypoints`, and, while
/// there are any, a second subscriber taking every epoch for the
/// forwarder's own region monitor, whose entries and exits go out as
/// `transition`s. Both subscribers are root-equivalent: the administrator
/// configured the forwarder.
public final class MQTTFeature: Feature {
    public typealias Settings = MQTTSettings

    public let name = "MQTT forwarder"
    public let forwarder: any LocationForwarder
    private let host: any FeatureHost
    private let settings: MQTTSettings
    private var subscriber: SubscriberID?
    private var epochs = EpochSubscription()
    private var monitor = RegionMonitor()
    private var placesByName: [String: SavedPlace] = [:]
    /// Sees each location just before the forwarder journals it (a test's
    /// window on the order of writes).
    public var willForward: ((Location) -> Void)?

    public static func make(_ settings: MQTTSettings, host: any FeatureHost) -> MQTTFeature? {
        guard settings.enabled else { return nil }
        guard let stateDirectory = host.stateDirectory else {
            host.log(.error, "not forwarding to MQTT: the daemon keeps no state directory for its journal")
            return nil
        }
        let identity = settings.identityOnThisHost()
        let forwarder = MQTTForwarder(
            settings: settings, identity: identity, stateDirectory: stateDirectory, queue: host.queue,
            version: AklocVersion.string,
            log: { [weak host] level, message in host?.log(level, message, ["AKLOC_MQTT": identity.topic]) },
            clock: host.clock)
        return MQTTFeature(settings: settings, host: host, forwarder: forwarder)
    }

    public init(settings: MQTTSettings, host: any FeatureHost, forwarder: any LocationForwarder) {
        self.settings = settings
        self.host = host
        self.forwarder = forwarder
    }

    public func start() throws(ComponentError) {
        forwarder.start()
        subscriber = host.addSubscriber(.daemon, sink: Sink(.afterSockets) { [weak self] in self?.forward($0) })
        host.startUpdating(subscriber!, policy: .init(settings.policy), everyEpoch: false)
        let status = forwarder.status
        host.log(.notice, "forwarding fixes to \(status.broker) on \(status.topic) (tid \(status.tid))")
        host.observe(SharedPlaces.self) { [weak self] in self?.sharedPlacesChanged($0.places) }
    }

    public func stop() {
        forwarder.stop()
    }

    public func apply(_ settings: MQTTSettings) {
        host.log(.notice, "[mqtt] applies at the next restart; the forwarder keeps its running settings")
    }

    public func report(into status: inout DaemonStatus) {
        let forwarded = forwarder.status
        status.mqtt = DaemonStatus.MQTT(
            broker: forwarded.broker, topic: forwarded.topic, tid: forwarded.tid, connected: forwarded.connected,
            queued: forwarded.queued, queuedBytes: forwarded.queuedBytes,
            oldestQueuedAgeSeconds: forwarded.oldestQueuedAgeSeconds, published: forwarded.published,
            failed: forwarded.failed, resent: forwarded.resent,
            dropped: DaemonStatus.MQTT.Dropped(
                maxEntries: forwarded.dropped.maxEntries, maxBytes: forwarded.dropped.maxBytes,
                maxAge: forwarded.dropped.maxAge),
            lastError: forwarded.connected ? nil : forwarded.lastError?.description, nodes: forwarded.nodes,
            switches: forwarded.switches)
    }

    /// Each throttled delivery is one OwnTracks location.
    private func forward(_ event: Engine.Event) {
        guard case .didUpdateLocation(let location, _) = event else { return }
        willForward?(location)
        forwarder.accept(location)
    }

    private func sharedPlacesChanged(_ places: [SavedPlace]) {
        forwarder.publishWaypoints(places.map(Self.waypoint))
        placesByName = Dictionary(places.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        // A place that stayed the same keeps its inside/outside state.
        monitor.setRegions(places.map(RegionMonitor.Region.init))
        epochs.want(!places.isEmpty, host: host, phase: .afterSockets) { [weak self] in self?.watch($0) }
    }

    /// Every epoch, for the forwarder's region monitor.
    private func watch(_ fix: Location) {
        let events = monitor.update(
            location: Coordinate(latitude: fix.latitude, longitude: fix.longitude), accuracy: fix.horizontalAccuracy,
            now: host.clock.now())
        for event in events {
            let (kind, region): (OwnTracksPayload.TransitionEvent, RegionMonitor.Region)
            switch event {
            case .didEnter(let entered, _): (kind, region) = (.enter, entered)
            case .didExit(let left, _): (kind, region) = (.leave, left)
            }
            guard let place = placesByName[region.name] else { continue }
            forwarder.publishTransition(kind, waypoint: Self.waypoint(place), location: fix)
        }
    }

    static func waypoint(_ place: SavedPlace) -> OwnTracksPayload.Waypoint {
        OwnTracksPayload.Waypoint(
            name: place.name, latitude: place.coordinate.latitude, longitude: place.coordinate.longitude,
            radius: place.radius, createdAt: place.createdAt)
    }
}
