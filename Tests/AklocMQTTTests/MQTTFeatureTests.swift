import AklocCore
import AklocFeature
import AklocGeo
import AklocProtocol
import AklocTestSupport
import Testing

@testable import AklocMQTT

/// A forwarder that records what the feature hands it, with a status the
/// test sets: the feature's part, without a broker or a journal.
final class RecordingForwarder: LocationForwarder {
    private(set) var started = 0
    private(set) var stopped = 0
    private(set) var accepted: [Location] = []
    private(set) var waypoints: [[OwnTracksPayload.Waypoint]] = []
    private(set) var transitions: [(event: OwnTracksPayload.TransitionEvent, name: String, location: Location)] = []
    var status = MQTTForwarder.Status(
        connected: true, broker: "mqtt://broker.test:1883", topic: "owntracks/test/car", tid: "ar", queued: 0,
        queuedBytes: 0, oldestQueuedAgeSeconds: nil, published: 0, failed: 0, resent: 0,
        dropped: ForwardQueue.Drops(), lastError: nil)

    func start() { started += 1 }
    func stop() { stopped += 1 }
    func accept(_ location: Location) { accepted.append(location) }

    func publishWaypoints(_ waypoints: [OwnTracksPayload.Waypoint]) {
        self.waypoints.append(waypoints)
    }

    func publishTransition(
        _ event: OwnTracksPayload.TransitionEvent, waypoint: OwnTracksPayload.Waypoint, location: Location
    ) {
        transitions.append((event, waypoint.name, location))
    }
}

/// `MQTTFeature` against a fake host on virtual time: its subscribers and
/// their sinks, what reaches the forwarder, the shared places as waypoints
/// and transitions, and its share of `status`.
@Suite struct MQTTFeatureTests {
    let host = FakeHost(stateDirectory: "/nonexistent/state")
    let forwarder = RecordingForwarder()

    func settings() throws -> MQTTSettings {
        var settings = MQTTSettings()
        settings.enabled = true
        settings.policy = try ThrottlePolicy(minInterval: 5, maxInterval: 120)
        return settings
    }

    /// A started feature; a test keeps it to its end, as the daemon keeps
    /// its features (the sinks hold it weakly).
    func started() throws -> MQTTFeature {
        let feature = MQTTFeature(settings: try settings(), host: host, forwarder: forwarder)
        try host.sync { try feature.start() }
        return feature
    }

    static func fix(_ latitude: Double, _ longitude: Double, accuracy: Double = 5) -> Location {
        Location(latitude: latitude, longitude: longitude, horizontalAccuracy: accuracy)
    }

    static func place(_ name: String, _ latitude: Double, _ longitude: Double, radius: Double = 100) throws
        -> SavedPlace
    {
        try SavedPlace(
            name: name, coordinate: Coordinate(latitude: latitude, longitude: longitude), radius: radius, owner: 0,
            createdAt: FixTime(secondsSince1970: 1_780_000_000), shared: true)
    }

    @Test func startAddsOneDaemonSubscriberAfterTheSocketsWithTheSectionsPolicy() throws {
        let feature = try started()
        try host.sync {
            #expect(forwarder.started == 1)
            #expect(host.subscribers.count == 1)
            let id = try #require(host.added.first)
            #expect(host.changes == [.added(id, .daemon, .afterSockets)])
            let start = try #require(host.startRequest(of: id))
            #expect(start.policy == ThrottlePolicy.Partial(try settings().policy))
            #expect(start.everyEpoch == false)
            #expect(host.messages(at: .notice).contains { $0.contains("forwarding fixes to mqtt://broker.test:1883") })
            feature.stop()
            #expect(forwarder.stopped == 1)
        }
    }

    @Test func eachDeliveryReachingTheSinkIsAcceptedByTheForwarderInOrder() throws {
        let feature = try started()
        defer { host.sync { feature.stop() } }
        host.sync {
            let id = host.added[0]
            let fixes = (0..<3).map { Self.fix(52 + Double($0) * 0.001, 13) }
            for (index, fix) in fixes.enumerated() {
                host.time.advance(by: 5)
                host.deliver(.didUpdateLocation(fix, afterTimeInterval: index == 0 ? nil : 5), to: id)
            }
            // Not a location: nothing to forward.
            host.deliver(.didGetNotification(.sourceDisconnected), to: id)
            #expect(forwarder.accepted == fixes)
        }
    }

    @Test func sharedPlacesArePublishedAndWatchedByASecondSubscriberOnlyWhileThereAreAny() throws {
        let feature = try started()
        defer { host.sync { feature.stop() } }
        try host.sync {
            let main = host.added[0]
            let home = try Self.place("home", 52.5, 13.4)
            let work = try Self.place("work", 52.52, 13.41, radius: 250)
            host.post(SharedPlaces([home, work]))
            #expect(forwarder.waypoints.map { $0.map(\.name) } == [["home", "work"]])
            let published = try #require(forwarder.waypoints.first?.last)
            #expect(published.radius == 250 && published.latitude == 52.52 && published.longitude == 13.41)
            #expect(host.subscribers.count == 2)
            let watcher = try #require(host.added.last)
            #expect(watcher != main)
            #expect(host.changes.last == .added(watcher, .daemon, .afterSockets))
            let start = try #require(host.startRequest(of: watcher))
            #expect(start.policy == nil && start.everyEpoch)

            // A change keeps the one watcher.
            host.post(SharedPlaces([home]))
            #expect(host.added.count == 2)
            #expect(forwarder.waypoints.last?.map(\.name) == ["home"])

            // None left: the watcher goes, the main subscriber stays.
            host.post(SharedPlaces([]))
            #expect(host.removed == [watcher])
            #expect(host.subscribers.keys.sorted() == [main])
            #expect(forwarder.waypoints.last?.isEmpty == true, "an empty list clears the retained waypoints")
            #expect(host.inputs.contains { if case .disconnect(watcher) = $0 { true } else { false } })
        }
    }

    @Test func placesPostedBeforeTheStartArePublishedAtTheStart() throws {
        try host.sync { host.post(SharedPlaces([try Self.place("home", 52.5, 13.4)])) }
        let feature = try started()
        defer { host.sync { feature.stop() } }
        host.sync {
            #expect(forwarder.waypoints.map { $0.map(\.name) } == [["home"]])
            #expect(host.everyEpochSubscribers.count == 1)
        }
    }

    @Test func walkingIntoAndOutOfASharedPlacePublishesEnterAndLeave() throws {
        let feature = try started()
        defer { host.sync { feature.stop() } }
        try host.sync {
            host.post(SharedPlaces([try Self.place("home", 52.5, 13.4)]))
            // 1 km south, then at the door, then inside twice, then out again.
            let outside = Self.fix(52.491, 13.4)
            let inside = Self.fix(52.5, 13.4)
            let near = Self.fix(52.5002, 13.4)
            let away = Self.fix(52.49, 13.4)
            for fix in [outside, inside, near, away] {
                host.time.advance(by: 1)
                host.deliverEpoch(fix)
            }
            #expect(forwarder.transitions.map(\.event) == [.enter, .leave])
            #expect(forwarder.transitions.map(\.name) == ["home", "home"])
            #expect(forwarder.transitions.map(\.location) == [inside, away])
            // The watcher's epochs are not forwarded as locations.
            #expect(forwarder.accepted.isEmpty)
        }
    }

    @Test func aFixAtTheEdgeWithinItsAccuracyDecidesNothing() throws {
        let feature = try started()
        defer { host.sync { feature.stop() } }
        try host.sync {
            host.post(SharedPlaces([try Self.place("home", 52.5, 13.4, radius: 100)]))
            // About 90 m from the centre, ±50 m: neither surely in nor out.
            host.deliverEpoch(Self.fix(52.50081, 13.4, accuracy: 50))
            #expect(forwarder.transitions.isEmpty)
        }
    }

    @Test func reportFillsTheMQTTStatus() throws {
        let feature = try started()
        forwarder.status.connected = false
        forwarder.status.queued = 3
        forwarder.status.queuedBytes = 420
        forwarder.status.oldestQueuedAgeSeconds = 12.5
        forwarder.status.published = 17
        forwarder.status.failed = 2
        forwarder.status.resent = 1
        forwarder.status.dropped.maxEntries = 4
        forwarder.status.dropped.maxAge = 5
        forwarder.status.dropped.expired = 6
        forwarder.status.lastError = MQTTError(.connectFailed, "connection refused")
        var status = DaemonStatus(
            state: .running, paused: false, uptimeSeconds: 1, source: .init(name: "test", connected: true), fix: nil,
            clients: .init(), counters: .init())
        host.sync { feature.report(into: &status) }
        let mqtt = try #require(status.mqtt)
        #expect(mqtt.broker == "mqtt://broker.test:1883")
        #expect(mqtt.topic == "owntracks/test/car")
        #expect(mqtt.tid == "ar")
        #expect(!mqtt.connected)
        #expect(mqtt.queued == 3 && mqtt.queuedBytes == 420 && mqtt.oldestQueuedAgeSeconds == 12.5)
        #expect(mqtt.published == 17 && mqtt.failed == 2 && mqtt.resent == 1)
        #expect(mqtt.dropped == DaemonStatus.MQTT.Dropped(maxEntries: 4, maxBytes: 0, maxAge: 5, expired: 6))
        #expect(mqtt.lastError?.contains("connection refused") == true)

        // Connected, the last error is history and not shown.
        forwarder.status.connected = true
        host.sync { feature.report(into: &status) }
        #expect(status.mqtt?.connected == true)
        #expect(status.mqtt?.lastError == nil)
    }

    @Test func aReloadKeepsTheRunningSettingsAndSaysSo() throws {
        let feature = try started()
        var changed = try settings()
        changed.hosts = [HostPort(host: "elsewhere.test")]
        host.sync {
            feature.apply(changed)
            #expect(host.messages(at: .notice).contains { $0.contains("[mqtt] applies at the next restart") })
            #expect(host.added.count == 1, "no new subscriber")
        }
    }

    @Test func makeNeedsTheSectionOnAndAStateDirectoryForTheJournal() throws {
        var off = try settings()
        off.enabled = false
        host.sync { #expect(MQTTFeature.make(off, host: host) == nil) }

        let noState = FakeHost()
        let settings = try settings()
        noState.sync {
            #expect(MQTTFeature.make(settings, host: noState) == nil)
            #expect(noState.messages(at: .error).contains { $0.contains("no state directory") })
            #expect(noState.added.isEmpty)
        }
        host.sync {
            let made = MQTTFeature.make(settings, host: host)
            #expect(made?.forwarder is MQTTForwarder)
            #expect(host.added.isEmpty, "nothing is subscribed before the start")
        }
    }
}
