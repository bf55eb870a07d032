import AklocCore
import Testing

/// The `satellites` key path (DESIGN §16) on virtual time: observed with a
/// throttle policy and change events, `get`-able, and needing `myLocation`'s
/// authorization.
@Suite struct EngineSatellitesTests {
    static func sky(used: Int, visible: Int = 3, hdop: Double = 0.9, at seconds: Int64 = 0) -> SkyView {
        let satellites = (0..<visible).map { number in
            SkyView.Satellite(
                prn: 5 + number, constellation: .gps, svid: 5 + number, elevation: 10 + Double(number),
                azimuth: 40 * Double(number), signal: 30, used: number < used)
        }
        return SkyView(
            visible: visible, used: used, dilutions: .init(hdop: hdop), satellites: satellites,
            device: "/dev/ttyUSB0", timestamp: FixTime(secondsSince1970: 1_594_507_065 + seconds))
    }

    static func policy(minInterval: Double) -> ThrottlePolicy.Partial {
        var policy = ThrottlePolicy()
        policy.minInterval = minInterval
        return ThrottlePolicy.Partial(policy)
    }

    @Test func getIsNullBeforeTheFirstSkyThenTheLatest() {
        var harness = Harness()
        harness.connect(1)
        #expect(harness.request(1, .get(KeyPath(.satellites))).replies(for: 1) == [.success(.value(.null))])
        harness.at(1, .sky(Self.sky(used: 2)))
        harness.at(2, .sky(Self.sky(used: 3)))
        #expect(
            harness.request(1, .get(KeyPath(.satellites))).replies(for: 1)
                == [.success(.value(.sky(Self.sky(used: 3))))])
        harness.send(.sourceDisconnected)
        #expect(
            harness.request(1, .get(KeyPath(.satellites))).replies(for: 1) == [.success(.value(.null))],
            "a sky from a source that is gone is not served")
    }

    @Test func observersGetAChangeOnlyWhenTheSkyChanges() {
        var harness = Harness()
        harness.connect(1)
        harness.at(1, .sourceConnected(name: "gpsd"))
        let reply = harness.request(
            1, .observe(KeyPath(.satellites), initial: true, old: true, policy: Self.policy(minInterval: 0)))
        #expect(reply.changes(for: 1).map(\.new) == [.null])
        #expect(harness.watching, "an observer of the sky needs the gpsd watch")
        harness.at(2, .sky(Self.sky(used: 2)))
        // The same sky in a later report (only its time moved): no change.
        harness.at(3, .sky(Self.sky(used: 2, at: 1)))
        harness.at(4, .sky(Self.sky(used: 3)))
        let changes = harness.log.changes(for: 1).dropFirst()
        #expect(changes.map(\.new) == [.sky(Self.sky(used: 2)), .sky(Self.sky(used: 3))])
        #expect(changes.map(\.old) == [.null, .sky(Self.sky(used: 2))])
    }

    @Test func minIntervalHoldsChangesBackUntilTheNextSkyAfterIt() {
        var harness = Harness()
        harness.connect(1)
        harness.connect(2)
        harness.request(
            1, .observe(KeyPath(.satellites), initial: false, old: false, policy: Self.policy(minInterval: 5)))
        harness.request(
            2, .observe(KeyPath(.satellites), initial: false, old: false, policy: Self.policy(minInterval: 0)))
        var times: [SubscriberID: [Double]] = [:]
        for second in 0..<12 {
            let outputs = harness.at(Double(second), .sky(Self.sky(used: second % 3, hdop: 0.5 + Double(second))))
            for id: SubscriberID in [1, 2] where !outputs.changes(for: id).isEmpty {
                times[id, default: []].append(Double(second))
            }
        }
        #expect(times[1] == [0, 5, 10], "every 5 s at most, on the first SKY after the interval")
        #expect(times[2] == Array(0..<12).map(Double.init), "minInterval 0: every changed SKY")
        // The held-back observer got the newest sky, not a stale one.
        let last = harness.log.changes(for: 1).last?.new
        #expect(last == .sky(Self.sky(used: 10 % 3, hdop: 10.5)))
    }

    @Test func theSkyNeedsLocationAuthorization() {
        var harness = Harness()
        harness.connect(1, .denied)
        harness.connect(2, .authorizedWhenInUse, active: false)
        harness.connect(3, .notDetermined)
        harness.at(1, .sky(Self.sky(used: 2)))
        for id: SubscriberID in [1, 3] {
            let observe = harness.request(id, .observe(KeyPath(.satellites), initial: true, old: false, policy: nil))
            #expect(EngineRegionsTests.code(observe.replies(for: id).first) == .notAuthorized)
            let get = harness.request(id, .get(KeyPath(.satellites)))
            #expect(EngineRegionsTests.code(get.replies(for: id).first) == .notAuthorized)
        }
        // whenInUse without a session: no value and no change, as for myLocation.
        #expect(harness.request(2, .get(KeyPath(.satellites))).replies(for: 2) == [.success(.value(.null))])
        harness.request(
            2, .observe(KeyPath(.satellites), initial: false, old: false, policy: Self.policy(minInterval: 0)))
        harness.at(2, .sky(Self.sky(used: 3)))
        #expect(harness.log.changes(for: 2).isEmpty)
        harness.send(.sessionChanged(uid: 1000, active: true))
        harness.at(3, .sky(Self.sky(used: 1)))
        #expect(harness.log.changes(for: 2).map(\.new) == [.sky(Self.sky(used: 1))])
        // Denied later: nothing more.
        harness.send(.authorizationChanged(2, .denied))
        harness.at(4, .sky(Self.sky(used: 2)))
        #expect(harness.log.changes(for: 2).count == 1)
    }

    @Test func pausedSendsNoSky() {
        var harness = Harness()
        harness.connect(1)
        harness.request(
            1, .observe(KeyPath(.satellites), initial: false, old: false, policy: Self.policy(minInterval: 0)))
        harness.request(1, .pause)
        harness.at(1, .sky(Self.sky(used: 2)))
        #expect(harness.log.changes(for: 1).isEmpty)
        harness.request(1, .resume)
        harness.at(2, .sky(Self.sky(used: 3)))
        #expect(harness.log.changes(for: 1).map(\.new) == [.sky(Self.sky(used: 3))])
    }

    @Test(arguments: ["satellites.used", "satellites.", "Satellites", "satellites.satellites"])
    func badPathsAreRefused(text: String) {
        #expect(throws: KeyPathError.self) { try KeyPath(parsing: text) }
    }

    @Test func thePathParses() throws {
        #expect(try KeyPath(parsing: "satellites") == KeyPath(.satellites))
        #expect(KeyPath(.satellites).revealsLocation)
    }
}
