import AklocCore
import Testing

@Suite struct EngineAuthorizationTests {
    typealias Status = AuthorizationStatus

    @Test(arguments: [
        (AuthorizationRequestType.whenInUse, AuthorizationRequestType?.some(.whenInUse), Status.authorizedWhenInUse),
        (.whenInUse, .always, .authorizedWhenInUse),
        (.always, .whenInUse, .authorizedWhenInUse),
        (.always, .always, .authorizedAlways),
        (.whenInUse, nil, .denied),
        (.always, nil, .denied),
    ])
    func requestGrantsAtMostWhatWasAskedAndConfigured(
        type: AuthorizationRequestType, defaultGrant: AuthorizationRequestType?, expected: Status
    ) {
        var harness = Harness(.init(defaultGrant: defaultGrant))
        harness.connect(1, uid: 1000, .notDetermined)
        let outputs = harness.at(0, .request(1, 1, .requestAuthorization(type)))
        let notifications: [AklocCore.Notification] =
            switch expected {
            case .authorizedAlways: [.userAuthorizedAlways, .authorizedAlways]
            case .authorizedWhenInUse: [.userAuthorizedWhenInUse, .authorizedWhenInUse]
            default: [.userAuthorizationDenied, .authorizationDenied]
            }
        #expect(outputs.notifications(for: 1) == notifications)
        #expect(outputs.last == .persist)
        #expect(outputs.replies(for: 1) == [.success(.authorization(expected))])
        // Notifications come before the reply.
        #expect(outputs.dropLast().last == .reply(1, 1, .success(.authorization(expected))))
        #expect(harness.engine.persistentState.authorizationDecisions == [1000: expected])
        #expect(harness.engine.authorizationStatus(of: 1) == expected)
    }

    @Test func aDeterminedStatusIsJustReported() {
        var harness = Harness()
        harness.connect(1, .authorizedAlways)
        harness.connect(2, uid: 2, .denied)
        #expect(
            harness.at(0, .request(1, 1, .requestAuthorization(.whenInUse)))
                == [.reply(1, 1, .success(.authorization(.authorizedAlways)))])
        #expect(
            harness.at(0, .request(2, 2, .requestAuthorization(.always)))
                == [.reply(2, 2, .success(.authorization(.denied)))])
        // A second request after a decision is also just answered.
        harness.connect(3, uid: 3, .notDetermined)
        harness.request(3, .requestAuthorization(.whenInUse))
        let again = harness.at(0, .request(3, 9, .requestAuthorization(.always)))
        #expect(again == [.reply(3, 9, .success(.authorization(.authorizedWhenInUse)))])
    }

    @Test func theDecisionReachesTheUidsOtherUndecidedConnections() {
        var harness = Harness()
        harness.connect(1, uid: 1000, .notDetermined)
        harness.connect(2, uid: 1000, .notDetermined)
        harness.connect(3, uid: 1000, .authorizedAlways)  // a rule for the uid's group, say
        harness.connect(4, uid: 2000, .notDetermined)
        harness.request(2, .observe(KeyPath(.authorizationStatus), initial: false, old: true, policy: nil))
        let outputs = harness.request(1, .requestAuthorization(.always))
        #expect(outputs.notifications(for: 1) == [.userAuthorizedWhenInUse, .authorizedWhenInUse])
        #expect(outputs.notifications(for: 2) == [.authorizedWhenInUse])
        #expect(outputs.notifications(for: 3).isEmpty)
        #expect(outputs.notifications(for: 4).isEmpty)
        #expect(outputs.changes(for: 2).map(\.new) == [.string("authorizedWhenInUse")])
        #expect(outputs.changes(for: 2).map(\.old) == [.string("notDetermined")])
        #expect(harness.engine.authorizationStatus(of: 2) == .authorizedWhenInUse)
        #expect(harness.engine.authorizationStatus(of: 4) == .notDetermined)
        // A later connection of the uid starts with the stored decision.
        harness.connect(5, uid: 1000, .notDetermined)
        #expect(harness.engine.authorizationStatus(of: 5) == .authorizedWhenInUse)
    }

    @Test func decisionsSurviveARestart() throws {
        var harness = Harness()
        harness.connect(1, uid: 1000, .notDetermined)
        harness.request(1, .requestAuthorization(.whenInUse))
        var restarted = Harness(restoring: harness.engine.persistentState)
        restarted.connect(7, uid: 1000, .notDetermined)
        #expect(restarted.engine.authorizationStatus(of: 7) == .authorizedWhenInUse)
        // A rule from the config (the peer's status) wins over a stored decision.
        restarted.connect(8, uid: 1000, .denied)
        #expect(restarted.engine.authorizationStatus(of: 8) == .denied)
    }

    @Test func startingWithoutAuthorizationNotifiesAndFails() {
        for status in [Status.notDetermined, .denied] {
            var harness = Harness()
            harness.connect(1, status)
            let outputs = harness.start(1)
            #expect(outputs.notifications(for: 1) == [.locationManagerNotAuthorized])
            #expect(outputs.replies(for: 1).first?.errorCode == .notAuthorized)
            #expect(outputs.watchChanges.isEmpty)
        }
    }

    @Test func aReloadThatDeniesCutsLocationsAtOnceAndRestoringResumes() {
        var harness = Harness()
        harness.send(.sourceConnected(name: "gpsd"))
        harness.connect(1, .authorizedAlways)
        harness.start(1, everyEpoch: true)
        harness.request(1, .observe(KeyPath(.rawLocation), initial: false, old: false, policy: nil))
        harness.request(1, .observe(KeyPath(.authorizationStatus), initial: false, old: false, policy: nil))
        harness.at(0, .fix(fix(second: 0)))
        harness.at(3, .request(1, 42, .requestLocation(timeout: 10)))
        let denied = harness.at(4, .authorizationChanged(1, .denied))
        #expect(denied.notifications(for: 1) == [.authorizationDenied])
        #expect(denied.changes(for: 1).map(\.new) == [.string("denied")])
        #expect(
            denied.contains { if case .reply(1, 42, .failure(let e)) = $0 { e.code == .notAuthorized } else { false } })
        #expect(denied.watchChanges == [false])
        for second in 5...20 {
            #expect(harness.at(Double(second), .fix(fix(second: Int64(second)))).events(for: 1).isEmpty)
        }
        // The same status again is no change.
        #expect(harness.at(21, .authorizationChanged(1, .denied)).isEmpty)
        let back = harness.at(22, .authorizationChanged(1, .authorizedWhenInUse))
        #expect(back.notifications(for: 1) == [.authorizedWhenInUse])
        #expect(back.watchChanges == [true])
        let next = harness.at(23, .fix(fix(second: 23)))
        #expect(next.updates(for: 1).count == 1)
        #expect(next.changes(for: 1).count == 1)
    }

    @Test func regainingAuthorizationRerunsAnUnfinishedFirstFixLoop() {
        var harness = Harness()
        harness.send(.sourceConnected(name: "gpsd"))
        harness.connect(1, .authorizedAlways)
        harness.at(0, .request(1, 1, .startUpdatingLocation(policy: nil, everyEpoch: false)))
        harness.at(0.5, .authorizationChanged(1, .denied))
        harness.run(until: 30)
        #expect(harness.log.events(for: 1).filter { if case .didGetError = $0 { true } else { false } }.isEmpty)
        harness.at(30, .authorizationChanged(1, .authorizedAlways))
        #expect(harness.armed == .seconds(31))
    }

    @Test func grantIsTheMinimumOfRequestAndDefault() {
        #expect(Engine.grant(.always, defaultGrant: .always) == .authorizedAlways)
        #expect(Engine.grant(.always, defaultGrant: .whenInUse) == .authorizedWhenInUse)
        #expect(Engine.grant(.whenInUse, defaultGrant: .always) == .authorizedWhenInUse)
        #expect(Engine.grant(.whenInUse, defaultGrant: nil) == .denied)
    }
}
