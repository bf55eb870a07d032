import AklocCore
import AklocGeo
import AklocJSON
import AklocProtocol
import Testing

@testable import AKLocationManager

/// The manager's pure core on a manual clock: no socket, no sleeps. Lines
/// fed in are the daemon's wire text (docs/protocol.md).
@Suite struct ManagerCoreTests {
    static let hello = #"{"event":"hello","protocol":1,"version":"0.1.0","authorizationStatus":"authorizedAlways"}"#
    static let fix = #"{"latitude":52.85,"longitude":5.31,"speed":2.6,"mode":"3d"}"#
    static let arrival =
        #"{"arrival":"2026-11-30T07:02:11.000Z","coordinate":{"latitude":52.7033,"longitude":5.2917},"radius":0.0}"#
    static let departure =
        #"{"arrival":"2026-11-30T07:02:11.000Z","coordinate":{"latitude":52.70331,"longitude":5.29168},"#
        + #""departure":"2026-11-30T11:30:05.000Z","radius":6.8,"place":"Home","#
        + #""country":{"code":"NL","name":"Netherlands","flag":"🇳🇱"},"#
        + #""timeZone":{"identifier":"Europe/Amsterdam","abbreviation":"CET","secondsFromGMT":3600,"#
        + #""isDaylightSavingTime":false}}"#

    /// The core and everything it asked for, in order.
    struct Harness {
        var core = ManagerCore(socketPath: "/test/akloc.sock")
        var now = Instant.zero
        var actions: [ManagerCore.Action] = []
        /// How many of `actions` `sent()` has returned already.
        var sentCursor = 0

        mutating func feed(_ input: ManagerCore.Input) {
            actions += core.handle(input, at: now)
        }

        mutating func line(_ text: String) {
            feed(.line(Array(text.utf8)))
        }

        /// Moves the clock to the armed timer (if any is due by `limit`) and ticks.
        mutating func advance(to limit: Instant) {
            while let wake = core.nextWake, wake <= limit {
                now = wake
                feed(.tick)
            }
            now = limit
        }

        /// The requests sent since the last call, decoded.
        mutating func sent() -> [[String: JSONValue]] {
            defer { sentCursor = actions.count }
            return actions[sentCursor...].compactMap { action in
                guard case .send(let bytes) = action, bytes.last == 0x0A,
                    case .success(.object(let object)) = JSONValue.parse(bytes.dropLast())
                else { return nil }
                return object
            }
        }

        var events: [AKLocationManagerEvent] {
            actions.compactMap { action in
                if case .deliver(let event) = action { return event }
                return nil
            }
        }

        var errors: [AKLocationManagerError] {
            events.compactMap { event in
                if case .didGetError(let error) = event { return error }
                return nil
            }
        }

        mutating func clear() {
            actions = []
            sentCursor = 0
        }

        var opens: Int { actions.filter { $0 == .open }.count }

        /// Connects: the socket opens and the daemon says hello.
        mutating func connect(hello: String = ManagerCoreTests.hello) {
            feed(.connect)
            feed(.opened)
            line(hello)
        }

        /// The id of the last sent request with `op`.
        mutating func lastID(of op: String, in requests: [[String: JSONValue]]) -> Int64? {
            guard case .int(let id)? = requests.last(where: { $0["op"] == .string(op) })?["id"] else { return nil }
            return id
        }
    }

    @Test func startConnectsAndSubscribesWithTheSeedDefaultsOnHello() {
        var harness = Harness()
        harness.feed(.startUpdating)
        #expect(harness.opens == 1)
        #expect(harness.events.contains(.connectionStateChanged(.connecting)))
        #expect(harness.sent().isEmpty, "nothing is sent before the hello")
        harness.connect()
        #expect(harness.events.contains(.connectionStateChanged(.connected)))
        let requests = harness.sent()
        #expect(requests.map { $0["op"] } == [.string("startUpdatingLocation")])
        let policy = requests.first?["policy"]
        #expect(policy?["updateSpeed"] == .double(0.4))
        #expect(policy?["minInterval"] == .double(5))
        #expect(policy?["maxInterval"] == .double(300))
        #expect(harness.core.authorizationStatus == .authorizedAlways)
    }

    @Test func firstLocationErrorAfterTheConfiguredAttemptsOnceASecond() {
        var harness = Harness()
        var settings = harness.core.settings
        settings.firstLocationAttempts = 3
        harness.feed(.settingsChanged(settings))
        harness.feed(.startUpdating)
        harness.connect()
        // The daemon's own error (its own count) is not the manager's.
        harness.line(#"{"event":"didGetError","error":"locationManagerCantDetectFirstLocation"}"#)
        harness.advance(to: .seconds(1.9))
        #expect(harness.errors.isEmpty)
        harness.advance(to: .seconds(2))
        #expect(harness.errors == [.locationManagerCantDetectFirstLocation])
        harness.advance(to: .seconds(60))
        #expect(harness.errors.count == 1, "reported once")
        // A late first location still arrives.
        harness.line(#"{"event":"didGetFirstLocation","location":\#(ManagerCoreTests.fix)}"#)
        #expect(harness.events.contains { if case .didGetFirstLocation = $0 { true } else { false } })
        #expect(harness.core.myLocation?.latitude == 52.85)
    }

    @Test func aSecondStartKeepsTheFirstFixLoopItHas() {
        var harness = Harness()
        harness.feed(.startUpdating)
        harness.connect()
        harness.line(#"{"event":"didGetFirstLocation","location":\#(ManagerCoreTests.fix)}"#)
        harness.now = .seconds(10)
        harness.feed(.startUpdating)
        #expect(harness.sent().last?["op"] == "startUpdatingLocation")
        harness.advance(to: .seconds(60))
        #expect(harness.errors.isEmpty, "no error for a loop the daemon does not run again")
    }

    @Test func aFirstLocationInTimeStopsTheAttempts() {
        var harness = Harness()
        harness.feed(.startUpdating)
        harness.connect()
        harness.now = .seconds(0.3)
        harness.line(#"{"event":"didGetFirstLocation","location":\#(ManagerCoreTests.fix)}"#)
        harness.line(
            #"{"event":"didUpdateLocation","location":\#(ManagerCoreTests.fix),"afterTimeInterval":5.468}"#)
        harness.advance(to: .seconds(30))
        #expect(harness.errors.isEmpty)
        #expect(harness.core.nextWake == nil)
        let location = harness.core.myLocation
        #expect(harness.events.contains(.didUpdateLocation(location!, afterTimeInterval: 5.468)))
    }

    @Test func garbageFromTheDaemonIsAClearErrorThenItReconnectsWithBackoffAndResubscribes() {
        var harness = Harness()
        harness.feed(.startUpdating)
        harness.feed(.observe(KeyPath(.myLocation)))
        harness.connect()
        _ = harness.sent()
        harness.line("this is not json")
        #expect(harness.actions.contains(.close))
        guard case .badMessage(let message)? = harness.errors.first else {
            Issue.record("no badMessage: \(harness.errors)")
            return
        }
        #expect(message.contains("not the protocol"))
        guard case .backingOff(let until) = harness.core.link else {
            Issue.record("not backing off: \(harness.core.link)")
            return
        }
        #expect(until == .seconds(0.25))
        harness.clear()
        harness.advance(to: .seconds(0.25))
        #expect(harness.opens == 1)
        // The daemon is gone: each failure doubles the wait, and the outage is reported once.
        harness.feed(.openFailed("ENOENT: No such file or directory"))
        #expect(harness.core.link == .backingOff(until: .seconds(0.75)))
        harness.advance(to: .seconds(0.75))
        harness.feed(.openFailed("ENOENT: No such file or directory"))
        #expect(harness.core.link == .backingOff(until: .seconds(1.75)))
        #expect(harness.errors.isEmpty, "one error per outage: \(harness.errors)")
        harness.advance(to: .seconds(1.75))
        harness.connect()
        let ops = harness.sent().compactMap { $0["op"]?.stringValue }
        #expect(ops == ["startUpdatingLocation", "observe"])
        // Healthy again: the next outage starts from the first delay.
        harness.feed(.closed(pendingBytes: 0))
        #expect(harness.core.link == .backingOff(until: .seconds(2)))
        #expect(harness.errors.count == 1)
    }

    @Test func aConnectionCutMidLineSaysSo() {
        var harness = Harness()
        harness.feed(.startUpdating)
        harness.connect()
        harness.feed(.closed(pendingBytes: 17))
        guard case .badMessage(let message)? = harness.errors.first else {
            Issue.record("no badMessage: \(harness.errors)")
            return
        }
        #expect(message.contains("middle of a line (17 bytes"))
    }

    @Test func badHellosAreRejected() {
        for (hello, expected) in [
            (#"{"event":"hello","protocol":2,"version":"9","authorizationStatus":"authorizedAlways"}"#, "protocol 2"),
            (#"{"id":1,"ok":true,"result":null}"#, "did not start with hello"),
            (#"{"event":"hello"}"#, "not the protocol"),
            (#"[1,2,3]"#, "not the protocol"),
        ] {
            var harness = Harness()
            harness.feed(.startUpdating)
            harness.connect(hello: hello)
            #expect(harness.core.link != .connected)
            guard case .badMessage(let message)? = harness.errors.first else {
                Issue.record("\(hello): no badMessage: \(harness.errors)")
                continue
            }
            #expect(message.contains(expected), "\(hello): \(message)")
        }
    }

    @Test func aLocationEventWithoutAValidLocationDropsTheConnection() {
        var harness = Harness()
        harness.feed(.startUpdating)
        harness.connect()
        harness.line(#"{"event":"didUpdateLocation","location":{"latitude":"north"}}"#)
        #expect(harness.actions.contains(.close))
        #expect(harness.errors.first?.code == "badMessage")
    }

    @Test func notAuthorizedThenGrantedStartsTheUpdatesAskedFor() {
        var harness = Harness()
        harness.feed(.startUpdating)
        harness.connect(
            hello: #"{"event":"hello","protocol":1,"version":"0.1.0","authorizationStatus":"notDetermined"}"#)
        let startID = harness.lastID(of: "startUpdatingLocation", in: harness.sent())
        harness.line(#"{"event":"didGetNotification","notification":"locationManagerNotAuthorized"}"#)
        harness.line(
            #"{"id":\#(startID ?? 0),"ok":false,"error":{"code":"notAuthorized","message":"needs authorization"}}"#)
        #expect(harness.errors.isEmpty, "the notification says it; no second report")
        #expect(harness.events.contains(.didGetNotification(.locationManagerNotAuthorized)))
        harness.feed(.requestAuthorization(.whenInUse))
        let authorizationID = harness.lastID(of: "requestAuthorization", in: harness.sent())
        harness.line(#"{"event":"didGetNotification","notification":"userAuthorizedWhenInUse"}"#)
        harness.line(#"{"event":"didGetNotification","notification":"authorizedWhenInUse"}"#)
        harness.line(
            #"{"id":\#(authorizationID ?? 0),"ok":true,"result":{"authorizationStatus":"authorizedWhenInUse"}}"#)
        #expect(harness.sent().compactMap { $0["op"]?.stringValue } == ["startUpdatingLocation"])
        #expect(harness.core.authorizationStatus == .authorizedWhenInUse)
        #expect(
            harness.events.filter { if case .didGetNotification = $0 { true } else { false } } == [
                .didGetNotification(.locationManagerNotAuthorized), .didGetNotification(.userAuthorizedWhenInUse),
                .didGetNotification(.authorizedWhenInUse),
            ])
    }

    @Test func requestLocationIsSentOnConnectAnsweredOrTimedOut() {
        var harness = Harness()
        harness.feed(.requestLocation(token: 7, timeout: 3))
        harness.connect()
        let requests = harness.sent()
        #expect(requests.first?["op"] == "requestLocation")
        #expect(requests.first?["timeout"] == .double(3))
        let id = harness.lastID(of: "requestLocation", in: requests) ?? 0
        harness.line(#"{"id":\#(id),"ok":true,"result":\#(ManagerCoreTests.fix)}"#)
        #expect(harness.actions.contains { if case .complete(7, .success) = $0 { true } else { false } })
        #expect(harness.core.myLocation?.speed == 2.6)

        // Never reachable: the request ends at its timeout plus the grace.
        var offline = Harness()
        offline.feed(.requestLocation(token: 8, timeout: 3))
        offline.feed(.openFailed("ECONNREFUSED"))
        offline.advance(to: .seconds(4.9))
        #expect(!offline.actions.contains { if case .complete = $0 { true } else { false } })
        offline.advance(to: .seconds(5))
        #expect(
            offline.actions.contains {
                if case .complete(8, .failure(let error)) = $0 { error.code == "timeout" } else { false }
            })
    }

    @Test func requestLocationForTheDelegateAnswersWithDidUpdateLocationOrAnError() {
        var harness = Harness()
        harness.connect()
        harness.feed(.requestLocation(token: nil, timeout: 1))
        let id = harness.lastID(of: "requestLocation", in: harness.sent()) ?? 0
        harness.line(#"{"id":\#(id),"ok":false,"error":{"code":"unavailable","message":"the service is paused"}}"#)
        #expect(harness.errors == [.request(code: "unavailable", message: "the service is paused")])
    }

    @Test func observedChangesAreDeliveredAndSetMyLocation() {
        var harness = Harness()
        harness.feed(.observe(KeyPath(.myLocation)))
        harness.connect()
        let observe = harness.sent().first
        #expect(observe?["op"] == "observe")
        #expect(observe?["keyPath"] == "myLocation")
        #expect(observe?["options"] == ["old"])
        #expect(observe?["policy"]?["minInterval"] == .double(5))
        harness.line(#"{"event":"change","keyPath":"myLocation","new":\#(ManagerCoreTests.fix),"old":null}"#)
        // A path nobody observes (a stale event after unobserve) is not delivered.
        harness.line(#"{"event":"change","keyPath":"state","new":"running"}"#)
        let changes = harness.events.compactMap { event -> AKLocationManagerChange? in
            if case .didChange(let change) = event { return change }
            return nil
        }
        #expect(changes.map(\.keyPath) == ["myLocation"])
        #expect(changes.first?.newLocation?.longitude == 5.31)
        #expect(changes.first?.old == .null)
        #expect(harness.core.myLocation?.longitude == 5.31)
    }

    @Test func changedSettingsReplaceLiveSubscriptionsPolicies() throws {
        var harness = Harness()
        harness.feed(.startUpdating)
        harness.feed(.observe(KeyPath(.myLocation, member: .speed)))
        harness.feed(.observe(KeyPath(.state)))
        harness.connect()
        _ = harness.sent()
        var settings = harness.core.settings
        settings.policy = try ThrottlePolicy(updateSpeed: 1.5, minInterval: 1, maxInterval: 60)
        harness.feed(.settingsChanged(settings))
        let requests = harness.sent()
        #expect(requests.compactMap { $0["op"]?.stringValue } == ["startUpdatingLocation", "observe"])
        #expect(requests.allSatisfy { $0["policy"]?["minInterval"] == .double(1) })
        #expect(requests.last?["keyPath"] == "myLocation.speed")
    }

    @Test func everyEpochIsAskedForWhenSet() {
        var harness = Harness()
        var settings = harness.core.settings
        settings.everyEpoch = true
        harness.feed(.settingsChanged(settings))
        harness.feed(.startUpdating)
        harness.connect()
        #expect(harness.sent().first?["everyEpoch"] == .bool(true))
        harness.line(#"{"event":"didUpdateLocation","location":\#(ManagerCoreTests.fix)}"#)
        #expect(harness.events.contains(.didUpdateLocation(harness.core.myLocation!, afterTimeInterval: nil)))
    }

    @Test func unobserveEndsTheObservationOnTheWireAndLocally() {
        var harness = Harness()
        harness.feed(.observe(KeyPath(.state)))
        harness.connect()
        _ = harness.sent()
        harness.feed(.unobserve(KeyPath(.state)))
        let requests = harness.sent()
        #expect(requests.map { $0["op"] } == ["unobserve"])
        #expect(requests.first?["keyPath"] == "state")
        harness.clear()
        harness.line(#"{"event":"change","keyPath":"state","new":"paused"}"#)
        #expect(harness.events.isEmpty)
        // Not observed any more: a reconnect does not observe it again.
        harness.feed(.closed(pendingBytes: 0))
        harness.advance(to: .seconds(1))
        harness.connect()
        #expect(!harness.sent().contains { $0["op"] == "observe" })
    }

    @Test func afterStopNoMoreUpdatesAreDelivered() {
        var harness = Harness()
        harness.feed(.startUpdating)
        harness.connect()
        harness.feed(.stopUpdating)
        #expect(harness.sent().last?["op"] == "stopUpdatingLocation")
        harness.clear()
        harness.line(#"{"event":"didUpdateLocation","location":\#(ManagerCoreTests.fix),"afterTimeInterval":5.0}"#)
        #expect(harness.events.isEmpty)
        #expect(harness.core.nextWake == nil, "no first-fix attempts after a stop")
    }

    @Test func unknownEventsAndNotificationsOfANewerDaemonAreIgnored() {
        var harness = Harness()
        harness.connect()
        harness.clear()
        harness.line(#"{"event":"didDetectActivity","activity":"walking"}"#)
        // A visit without `startMonitoringVisits` (another client's, or stale).
        harness.line(#"{"event":"didVisit","visit":\#(ManagerCoreTests.arrival)}"#)
        harness.line(#"{"event":"didEnterRegion","place":{"name":"home"},"location":\#(ManagerCoreTests.fix)}"#)
        harness.line(#"{"event":"didGetNotification","notification":"somethingNew"}"#)
        harness.line(#"{"id":999,"ok":true,"result":null}"#)
        #expect(harness.events.isEmpty)
        #expect(harness.core.link == .connected)
    }

    @Test func daemonStoppingThenCloseIsNoError() {
        var harness = Harness()
        harness.connect()
        harness.line(#"{"event":"didGetNotification","notification":"daemonStopping"}"#)
        harness.feed(.closed(pendingBytes: 0))
        #expect(harness.errors.isEmpty)
        #expect(harness.events.contains(.didGetNotification(.daemonStopping)))
        #expect(harness.events.contains(.connectionStateChanged(.waitingToReconnect(seconds: 0.25))))
    }

    // MARK: - Visits

    @Test func visitsAreAskedForAtHelloAndDeliveredArrivalThenDeparture() throws {
        var harness = Harness()
        harness.feed(.startMonitoringVisits)
        #expect(harness.opens == 1)
        #expect(harness.sent().isEmpty, "nothing is sent before the hello")
        harness.connect()
        #expect(harness.sent().map { $0["op"] } == ["startMonitoringVisits"])
        harness.line(#"{"id":1,"ok":true,"result":null}"#)
        harness.clear()
        harness.line(#"{"event":"didVisit","visit":\#(ManagerCoreTests.arrival)}"#)
        harness.line(#"{"event":"didVisit","visit":\#(ManagerCoreTests.departure)}"#)
        let visits = harness.events.compactMap { event in if case .didVisit(let visit) = event { visit } else { nil } }
        try #require(visits.count == 2, "\(harness.events)")
        #expect(visits[0].departure == nil)
        #expect(visits[0].arrival == FixTime(secondsSince1970: 1_764_486_131 + 365 * 86_400))
        #expect(visits[1].arrival == visits[0].arrival, "the departure is told of the same visit")
        #expect(visits[1].departure == FixTime(secondsSince1970: 1_764_502_205 + 365 * 86_400))
        #expect(visits[1].coordinate.latitude == 52.70331)
        #expect(visits[1].radius == 6.8)
        #expect(visits[1].place == "Home")
        #expect(visits[1].country?.code == "NL")
        #expect(visits[1].timeZone?.identifier == "Europe/Amsterdam")
        #expect(harness.errors.isEmpty)
    }

    @Test func visitMonitoringIsSentAgainAfterAReconnectAndStopsAtStop() {
        var harness = Harness()
        harness.feed(.startMonitoringVisits)
        harness.connect()
        _ = harness.sent()
        harness.feed(.closed(pendingBytes: 0))
        harness.advance(to: harness.now.advanced(bySeconds: 1))
        harness.feed(.opened)
        harness.line(ManagerCoreTests.hello)
        #expect(harness.sent().map { $0["op"] } == ["startMonitoringVisits"], "the new connection asks again")
        harness.feed(.stopMonitoringVisits)
        #expect(harness.sent().map { $0["op"] } == ["stopMonitoringVisits"])
        harness.clear()
        harness.line(#"{"event":"didVisit","visit":\#(ManagerCoreTests.departure)}"#)
        #expect(harness.events.isEmpty, "a visit after the stop is stale")
        harness.feed(.stopMonitoringVisits)
        #expect(harness.sent().isEmpty, "a second stop sends nothing")
    }

    @Test func theVisitKeyPathsChangeReadsAsAVisit() throws {
        var harness = Harness()
        harness.feed(.observe(try KeyPath(parsing: "visit")))
        harness.connect()
        harness.clear()
        harness.line(#"{"event":"change","keyPath":"visit","new":\#(ManagerCoreTests.arrival),"old":null}"#)
        harness.line(#"{"event":"change","keyPath":"visit","new":null,"old":\#(ManagerCoreTests.arrival)}"#)
        let changes = harness.events.compactMap { event in
            if case .didChange(let change) = event { change } else { nil }
        }
        try #require(changes.count == 2, "\(harness.events)")
        #expect(changes[0].newVisit?.arrival == FixTime(secondsSince1970: 1_764_486_131 + 365 * 86_400))
        #expect(changes[0].newVisit?.departure == nil)
        #expect(changes[1].newVisit == nil, "null between visits")
    }

    @Test func aClientThatMayNotReadHistoryHearsNotAuthorized() {
        var harness = Harness()
        harness.connect(
            hello: #"{"event":"hello","protocol":1,"version":"0.1.0","authorizationStatus":"authorizedWhenInUse"}"#)
        harness.feed(.startMonitoringVisits)
        let id = harness.lastID(of: "startMonitoringVisits", in: harness.sent())
        harness.line(
            #"{"id":\#(id ?? 0),"ok":false,"error":{"code":"notAuthorized","message":"visits need authorizedAlways"}}"#)
        #expect(harness.errors == [.request(code: "notAuthorized", message: "visits need authorizedAlways")])
    }

    @Test func aGarbageVisitIsABadMessageNamingTheMemberAndNothingIsDelivered() {
        let garbage = [
            (#"{"event":"didVisit","visit":"here"}"#, #""visit" must be a visit object, not a string"#),
            (
                #"{"event":"didVisit","visit":{"coordinate":{"latitude":1,"longitude":2},"radius":1}}"#,
                #""visit.arrival" is missing"#
            ),
            (
                #"{"event":"didVisit","visit":{"arrival":"2026-11-30T07:02:11Z","coordinate":{"latitude":"n"},"radius":1}}"#,
                #""visit.coordinate.latitude" is not a number"#
            ),
            (
                #"{"event":"didVisit","visit":{"arrival":"2026-11-30T07:02:11Z","coordinate":{"latitude":1,"longitude":2},"radius":1,"timeZone":{"identifier":"UTC"}}}"#,
                #""visit.timeZone.abbreviation" is missing"#
            ),
        ]
        for (line, member) in garbage {
            var harness = Harness()
            harness.feed(.startMonitoringVisits)
            harness.connect()
            harness.clear()
            harness.line(line)
            #expect(!harness.events.contains { if case .didVisit = $0 { true } else { false } })
            guard case .badMessage(let message)? = harness.errors.first else {
                Issue.record("\(line): no badMessage: \(harness.errors)")
                continue
            }
            #expect(message.contains("didVisit: \(member)"), "\(message)")
            #expect(harness.actions.contains(.close), "the connection is dropped, and made again")
        }
    }
}
