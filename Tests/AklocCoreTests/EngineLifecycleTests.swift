import AklocCore
import Testing

@Suite struct EngineLifecycleTests {
    /// Subscriber 1 whenInUse and 2 always, both uid 1000, both started, the source up.
    func ready() -> Harness {
        var harness = Harness()
        harness.send(.sourceConnected(name: "gpsd"))
        harness.connect(1, uid: 1000, .authorizedWhenInUse)
        harness.connect(2, uid: 1000, .authorizedAlways)
        harness.connect(3, uid: 3000, .authorizedWhenInUse)
        harness.start(1)
        harness.start(2)
        harness.start(3)
        return harness
    }

    @Test func whenInUseClientsGetFixesOnlyWhileTheSessionIsActive() {
        var harness = ready()
        harness.at(0, .fix(fix(second: 0, speed: 0)))
        let background = harness.at(10, .sessionChanged(uid: 1000, active: false))
        #expect(background.notifications(for: 1) == [.appInBackground])
        #expect(background.notifications(for: 2) == [.appInBackground])
        #expect(background.notifications(for: 3).isEmpty)
        var got: [SubscriberID: Int] = [:]
        for second in 11...700 {
            let outputs = harness.at(Double(second), .fix(fix(second: Int64(second), speed: 0)))
            for id: SubscriberID in [1, 2, 3] { got[id, default: 0] += outputs.updates(for: id).count }
        }
        #expect(got[1] == 0)
        #expect(got[2] == 2)
        #expect(got[3] == 2)
    }

    /// Asking is no way around the session: `get` and an initial `observe`
    /// value of a location path are null for a whenInUse subscriber in the
    /// background, while the always subscriber of the same uid sees the fix.
    @Test func aBackgroundedWhenInUseSubscriberCannotAskForThePosition() {
        var harness = ready()
        harness.at(0, .fix(fix(second: 0, speed: 0)))
        harness.at(10, .sessionChanged(uid: 1000, active: false))
        harness.at(11, .fix(fix(second: 11, speed: 0)))
        #expect(!harness.engine.mayReceiveLocations(1))
        #expect(harness.engine.mayReceiveLocations(2))
        for keyPath in [KeyPath(.myLocation), KeyPath(.rawLocation)] {
            #expect(harness.request(1, .get(keyPath)).replies(for: 1) == [.success(.value(.null))])
            #expect(harness.request(2, .get(keyPath)).replies(for: 2) != [.success(.value(.null))])
            let observed = harness.request(1, .observe(keyPath, initial: true, old: false, policy: nil))
            #expect(observed.changes(for: 1).map(\.new) == [.null])
        }
        harness.at(20, .sessionChanged(uid: 1000, active: true))
        #expect(harness.engine.mayReceiveLocations(1))
        #expect(harness.request(1, .get(KeyPath(.myLocation))).replies(for: 1) != [.success(.value(.null))])
    }

    @Test func comingBackForcesADeliveryThenAppActive() {
        var harness = ready()
        harness.at(0, .fix(fix(second: 0, speed: 0)))
        harness.at(10, .sessionChanged(uid: 1000, active: false))
        harness.at(50, .fix(fix(second: 50, speed: 0)))
        let active = harness.at(60, .sessionChanged(uid: 1000, active: true))
        // The whenInUse client gets the last fix at once, then appActive.
        #expect(
            active.events(for: 1) == [
                .didUpdateLocation(fix(second: 50, speed: 0), afterTimeInterval: 60), .didGetNotification(.appActive),
            ])
        // The always client never stopped: only the notification.
        #expect(active.events(for: 2) == [.didGetNotification(.appActive)])
        // The same state again is no change.
        #expect(harness.at(61, .sessionChanged(uid: 1000, active: true)).isEmpty)
    }

    @Test func withoutALiveFixTheNextOneIsForced() {
        var harness = ready()
        harness.at(0, .fix(fix(second: 0, speed: 0)))
        harness.at(10, .sessionChanged(uid: 1000, active: false))
        harness.at(20, .sourceDisconnected)
        let active = harness.at(30, .sessionChanged(uid: 1000, active: true))
        #expect(active.events(for: 1) == [.didGetNotification(.appActive)])
        harness.at(40, .sourceConnected(name: "gpsd"))
        let forced = harness.at(41, .fix(fix(second: 41, speed: 0)))
        #expect(forced.updates(for: 1).map(\.after) == [41])
        #expect(forced.updates(for: 2).isEmpty)
    }

    @Test func connectingInTheBackgroundWaitsForTheSession() {
        var harness = Harness()
        harness.send(.sourceConnected(name: "gpsd"))
        harness.connect(1, uid: 1000, .authorizedWhenInUse, active: false)
        let started = harness.start(1)
        #expect(started.replies(for: 1) == [.success(.done)])
        #expect(started.watchChanges.isEmpty)
        #expect(harness.armed == nil)
        harness.at(1, .fix(fix(second: 1)))
        #expect(harness.log.updates(for: 1).isEmpty)
        let active = harness.at(2, .sessionChanged(uid: 1000, active: true))
        #expect(active.watchChanges == [true])
        // A fresh live fix: first location, forced delivery, appActive.
        #expect(
            active.events(for: 1) == [
                .didGetFirstLocation(fix(second: 1)), .didUpdateLocation(fix(second: 1), afterTimeInterval: nil),
                .didGetNotification(.appActive),
            ])
    }

    @Test func daemonEventsReachEveryClient() {
        var harness = ready()
        harness.connect(9, uid: 9, .denied)
        let disconnected = harness.at(1, .sourceDisconnected)
        #expect(disconnected.sends.map(\.ids) == [[1, 2, 3, 9]])
        #expect(disconnected.notifications(for: 9) == [.sourceDisconnected])
        #expect(harness.at(2, .sourceConnected(name: "gpsd")).notifications(for: 9) == [.sourceConnected])
        let stopping = harness.at(3, .stopping)
        #expect(stopping.sends.map(\.ids) == [[1, 2, 3, 9]])
        #expect(stopping.notifications(for: 2) == [.daemonStopping])
    }

    @Test func restoringBringsBackPauseAndTheLastLocationForGetOnly() throws {
        let last = fix(second: 99)
        var harness = Harness(restoring: PersistentState(paused: true, lastLocation: last))
        #expect(harness.engine.snapshot.state == .paused)
        harness.send(.sourceConnected(name: "gpsd"))
        harness.connect(1)
        #expect(harness.request(1, .get(KeyPath(.myLocation))).replies(for: 1) == [.success(.value(.location(last)))])
        #expect(harness.start(1).watchChanges.isEmpty)
        harness.at(10, .request(1, 1, .resume))
        // The restored fix is not fresh: no first location from it.
        #expect(!harness.log.events(for: 1).contains(.didGetFirstLocation(last)))
        #expect(harness.armed == .seconds(11))
        #expect(!harness.engine.persistentState.paused)
    }

    @Test func snapshotCountsClientsAndTraffic() {
        var harness = ready()
        harness.request(3, .observe(KeyPath(.state), initial: false, old: false, policy: nil))
        harness.request(3, .stopUpdatingLocation)
        harness.at(5, .fix(fix(second: 5, speed: 0)))
        harness.at(5.1, .fix(fix(second: 5, speed: 0)))
        let snapshot = harness.engine.snapshot
        #expect(snapshot.clients == 3)
        #expect(snapshot.updating == 2)
        #expect(snapshot.observing == 1)
        #expect(snapshot.state == .running)
        #expect(snapshot.source == "gpsd")
        #expect(snapshot.lastFix == fix(second: 5, speed: 0))
        #expect(snapshot.lastFixAt == .seconds(5))
        #expect(snapshot.counters.fixes == 2)
        #expect(snapshot.counters.epochs == 1)
        #expect(snapshot.counters.deliveries == 2)
        #expect(snapshot.watching)
        #expect(!harness.engine.isPaused)
        harness.send(.disconnect(1))
        harness.send(.disconnect(1))
        #expect(harness.engine.snapshot.clients == 2)
    }
}

@Suite struct EngineLifecycleRequestTests {
    @Test func aBackgroundRequestWaitsForTheSession() {
        var harness = Harness()
        harness.send(.sourceConnected(name: "gpsd"))
        harness.connect(1, uid: 1000, .authorizedWhenInUse, active: false)
        harness.at(0, .fix(fix(second: 0)))
        #expect(harness.at(0.5, .request(1, 5, .requestLocation(timeout: 30))).replies(for: 1).isEmpty)
        #expect(harness.at(1, .fix(fix(second: 1))).replies(for: 1).isEmpty)
        let active = harness.at(1.5, .sessionChanged(uid: 1000, active: true))
        #expect(active.replies(for: 1) == [.success(.location(fix(second: 1)))])
        #expect(active.notifications(for: 1) == [.appActive])
        #expect(harness.armed == nil)
    }

    @Test func aReloadToNotDeterminedHasNoNotificationButGatesLocations() {
        var harness = Harness()
        harness.send(.sourceConnected(name: "gpsd"))
        harness.connect(1, .authorizedAlways)
        harness.start(1)
        let reset = harness.at(1, .authorizationChanged(1, .notDetermined))
        #expect(reset.notifications(for: 1).isEmpty)
        #expect(reset.watchChanges == [false])
        #expect(harness.at(2, .fix(fix(second: 2))).events(for: 1).isEmpty)
        // It may ask again, and the configured default answers.
        let asked = harness.request(1, .requestAuthorization(.always))
        #expect(asked.notifications(for: 1) == [.userAuthorizedWhenInUse, .authorizedWhenInUse])
        #expect(asked.watchChanges == [true])
        // Its unfinished first-fix loop started over, and found the fresh fix.
        #expect(asked.events(for: 1).contains(.didGetFirstLocation(fix(second: 2))))
    }
}
