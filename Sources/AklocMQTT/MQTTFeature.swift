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
    private var sharedPlaces: [SavedPlace] = []
    private let identity: MQTTSettings.Identity
    private var refusals = CommandRefusalLog()
    /// A `reportLocation` waits for the next epoch (there was no live fix).
    private var reportPending = false
    private var importSerial: UInt64 = 0
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
        return MQTTFeature(settings: settings, host: host, forwarder: forwarder, identity: identity)
    }

    public init(
        settings: MQTTSettings, host: any FeatureHost, forwarder: any LocationForwarder,
        identity: MQTTSettings.Identity? = nil
    ) {
        self.settings = settings
        self.host = host
        self.forwarder = forwarder
        self.identity = identity ?? settings.identityOnThisHost()
    }

    public func start() throws(ComponentError) {
        forwarder.handleCommands { [weak self] in self?.command($0) }
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
                maxAge: forwarded.dropped.maxAge, expired: forwarded.dropped.expired),
            lastError: forwarded.connected ? nil : forwarded.lastError?.description, nodes: forwarded.nodes,
            switches: forwarded.switches)
        status.mqtt?.protocolVersion = forwarded.protocolVersion
        status.mqtt?.sessionPresent = forwarded.sessionPresent
    }

    /// Each throttled delivery is one OwnTracks location.
    private func forward(_ event: Engine.Event) {
        guard case .didUpdateLocation(let location, _) = event else { return }
        willForward?(location)
        forwarder.accept(location)
    }

    private func sharedPlacesChanged(_ places: [SavedPlace]) {
        forwarder.publishWaypoints(places.map(Self.waypoint))
        sharedPlaces = places
        placesByName = Dictionary(places.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        // A place that stayed the same keeps its inside/outside state.
        monitor.setRegions(places.map(RegionMonitor.Region.init))
        updateEpochs()
    }

    /// Every epoch while there are places to watch or a `reportLocation`
    /// waits for a fix.
    private func updateEpochs() {
        epochs.want(!sharedPlaces.isEmpty || reportPending, host: host, phase: .afterSockets) { [weak self] in
            self?.watch($0)
        }
    }

    // MARK: Commands (docs/mqtt.md, "Commands")

    /// One message from `<topic>/cmd`: carried out if it is a command
    /// `[mqtt] commands` names, else ignored with a (rate-limited) line.
    private func command(_ payload: [UInt8]) {
        switch OwnTracksCommand.parse(payload, enabled: settings.commands) {
        case .failure(let error):
            if let line = refusals.refused(error, at: host.clock.now()) { host.log(.warning, line) }
        case .success(let command):
            host.log(.info, "MQTT: carrying out the \(command.action.rawValue) command")
            perform(command)
        }
    }

    private func perform(_ command: OwnTracksCommand) {
        switch command {
        case .reportLocation:
            // As `requestLocation`: the live fix now, else the next one.
            if let fix = host.liveFix {
                forwarder.accept(fix, trigger: .response)
            } else {
                reportPending = true
                updateEpochs()
            }
        case .waypoints:
            forwarder.publishWaypoints(sharedPlaces.map(Self.waypoint))
        case .dump:
            forwarder.publishDump(
                OwnTracksPayload.configuration(settings, identity: identity, commands: settings.commands.sorted()))
        case .setWaypoints(let waypoints):
            setWaypoints(waypoints)
        }
    }

    /// Shared places of the configured owner, saved by the places feature
    /// (the one owner of places and their files); its new shared list
    /// comes back here and goes out as `waypoints`. A waypoint without
    /// `tst` is created now.
    private func setWaypoints(_ waypoints: [OwnTracksPayload.Waypoint]) {
        var places: [SavedPlace] = []
        for waypoint in waypoints {
            let created = waypoint.createdAt.secondsSince1970 > 0 ? waypoint.createdAt : host.clock.wallNow()
            do {
                places.append(
                    try SavedPlace(
                        name: waypoint.name,
                        coordinate: Coordinate(latitude: waypoint.latitude, longitude: waypoint.longitude),
                        radius: waypoint.radius, owner: settings.placesOwner, createdAt: created, shared: true))
            } catch {
                // The parser checked each value with the same rules.
                host.log(.warning, "MQTT: setWaypoints: \(error)")
                return
            }
        }
        importSerial += 1
        host.post(
            PlacesImport(owner: settings.placesOwner, places: places, origin: "MQTT setWaypoints", serial: importSerial)
        )
    }

    /// Every epoch, for the forwarder's region monitor and a waiting `reportLocation`.
    private func watch(_ fix: Location) {
        if reportPending {
            reportPending = false
            forwarder.accept(fix, trigger: .response)
            updateEpochs()
        }
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
