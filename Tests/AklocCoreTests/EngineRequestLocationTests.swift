import AklocCore
import Testing

@Suite struct EngineRequestLocationTests {
    func ready() -> Harness {
        var harness = Harness()
        harness.send(.sourceConnected(name: "gpsd"))
        harness.connect(1)
        return harness
    }

    @Test func aFreshFixAnswersAtOnce() {
        var harness = ready()
        harness.at(10, .fix(fix(second: 10)))
        let outputs = harness.at(11, .request(1, 4, .requestLocation(timeout: 5)))
        #expect(outputs == [.reply(1, 4, .success(.location(fix(second: 10))))])
    }

    @Test func otherwiseTheNextFixAnswersPastTheThrottle() {
        var harness = ready()
        harness.start(1)
        harness.at(0, .fix(fix(second: 0, speed: 0)))
        let asked = harness.at(5, .request(1, 9, .requestLocation(timeout: 10)))
        #expect(asked.replies(for: 1).isEmpty)
        #expect(harness.armed == .seconds(15))
        let answered = harness.at(6, .fix(fix(second: 6, speed: 0)))
        #expect(answered.contains(.reply(1, 9, .success(.location(fix(second: 6, speed: 0))))))
        // The throttled stream is unaffected.
        #expect(answered.updates(for: 1).isEmpty)
        #expect(harness.armed == nil)
    }

    @Test func timesOutOnATick() {
        var harness = ready()
        let asked = harness.at(0, .request(1, 3, .requestLocation(timeout: 2.5)))
        #expect(asked.watchChanges == [true])
        #expect(harness.armed == .seconds(2.5))
        #expect(harness.at(2, .tick).replies(for: 1).isEmpty)
        let late = harness.at(2.5, .tick)
        #expect(late.replies(for: 1).map(\.errorCode) == [.timeout])
        #expect(late.watchChanges == [false])
        #expect(harness.armed == nil)
    }

    @Test func aStaleOrRestoredFixIsNotEnough() {
        var harness = Harness(restoring: PersistentState(lastLocation: fix(second: 1)))
        harness.send(.sourceConnected(name: "gpsd"))
        harness.connect(1)
        #expect(harness.at(0, .request(1, 1, .requestLocation(timeout: 5))).replies(for: 1).isEmpty)
        harness.at(1, .fix(fix(second: 2)))
        harness.at(2, .sourceDisconnected)
        #expect(harness.at(2.1, .request(1, 2, .requestLocation(timeout: 5))).replies(for: 1).isEmpty)
    }

    @Test func badTimeoutsAndMissingAuthorizationAreRefused() {
        var harness = ready()
        for timeout in [0, -1, Double.nan, .infinity, 1e12] {
            #expect(
                harness.request(1, .requestLocation(timeout: timeout)).replies(for: 1).first?.errorCode == .badRequest)
        }
        harness.connect(2, uid: 5, .notDetermined)
        #expect(harness.request(2, .requestLocation(timeout: 5)).replies(for: 2).first?.errorCode == .notAuthorized)
    }

    @Test func severalPendingRequestsAllGetTheFix() {
        var harness = ready()
        harness.connect(2, uid: 2)
        harness.at(0, .request(1, 1, .requestLocation(timeout: 5)))
        harness.at(0, .request(1, 2, .requestLocation(timeout: 9)))
        harness.at(0, .request(2, 3, .requestLocation(timeout: 7)))
        let answered = harness.at(1, .fix(fix(second: 1)))
        #expect(answered.replies(for: 1).count == 2)
        #expect(answered.replies(for: 2).count == 1)
        #expect(harness.armed == nil)
    }
}
