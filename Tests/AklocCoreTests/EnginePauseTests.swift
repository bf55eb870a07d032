import AklocCore
import Testing

@Suite struct EnginePauseTests {
    func walking(_ harness: inout Harness, from: Int, through: Int) -> [(Double, Double?)] {
        var result: [(Double, Double?)] = []
        for second in from...through {
            let outputs = harness.at(
                Double(second), .fix(fix(north: Double(second), second: Int64(second), speed: 1)))
            result += outputs.updates(for: 1).map { (Double(second), $0.after) }
        }
        return result
    }

    @Test func pauseThenResumeForceDeliversWithTheIntervalSpanningThePause() {
        var harness = Harness()
        harness.send(.sourceConnected(name: "gpsd"))
        harness.connect(1)
        harness.connect(2, uid: 2000, .denied)
        harness.start(1)
        #expect(walking(&harness, from: 0, through: 12).map(\.0) == [0, 5, 10])
        let paused = harness.at(12.5, .request(2, 7, .pause))
        #expect(paused.notifications(for: 1) == [.paused])
        #expect(paused.notifications(for: 2) == [.paused])
        #expect(paused.watchChanges == [false])
        #expect(paused.persists == 1)
        #expect(harness.engine.snapshot.state == .paused)
        #expect(harness.engine.persistentState.paused)
        // Fixes still trickling in while paused deliver nothing.
        #expect(walking(&harness, from: 13, through: 20).isEmpty)
        // Pausing again changes nothing.
        let again = harness.at(30, .request(2, 8, .pause))
        #expect(again == [.reply(2, 8, .success(.done))])

        let resumed = harness.at(72.5, .request(2, 9, .resume))
        #expect(resumed.notifications(for: 1) == [.resumed])
        #expect(resumed.watchChanges == [true])
        #expect(resumed.persists == 1)
        // The first fix after the resume is forced, even though it is still.
        let forced = harness.at(73, .fix(fix(north: 20, second: 73, speed: 0)))
        #expect(forced.updates(for: 1).map(\.after) == [63])
        #expect(forced.events(for: 1).contains(.didGetFirstLocation(fix(north: 20, second: 73, speed: 0))))
        // 60 s paused plus the time since the last delivery before it.
        #expect(abs(63 - (60.5 + 2.5)) < 1e-9)
        #expect(harness.at(74, .fix(fix(north: 20, second: 74, speed: 0))).updates(for: 1).isEmpty)
        #expect(harness.at(74.5, .request(2, 10, .resume)) == [.reply(2, 10, .success(.done))])
    }

    @Test func startWhilePausedWaitsForResume() {
        var harness = Harness()
        harness.send(.sourceConnected(name: "gpsd"))
        harness.connect(1)
        harness.request(1, .pause)
        let started = harness.start(1)
        #expect(started.replies(for: 1) == [.success(.done)])
        #expect(started.watchChanges.isEmpty)
        #expect(harness.armed == nil)
        let resumed = harness.at(10, .request(1, 5, .resume))
        #expect(resumed.watchChanges == [true])
        #expect(harness.armed == .seconds(11))
        #expect(harness.at(10.5, .fix(fix(second: 10))).updates(for: 1).map(\.after) == [nil])
    }

    @Test func pauseAnswersPendingRequestsAndRefusesNewOnes() {
        var harness = Harness()
        harness.send(.sourceConnected(name: "gpsd"))
        harness.connect(1)
        harness.request(1, .requestLocation(timeout: 30))
        let paused = harness.at(1, .request(1, 50, .pause))
        #expect(paused.replies(for: 1).map(\.errorCode) == [.unavailable, nil])
        #expect(harness.request(1, .requestLocation(timeout: 30)).replies(for: 1).first?.errorCode == .unavailable)
    }

    @Test func everyStreamIsForcedOnResume() throws {
        var harness = Harness()
        harness.send(.sourceConnected(name: "gpsd"))
        harness.connect(1)
        harness.request(1, .observe(KeyPath(.myLocation, member: .latitude), initial: false, old: false, policy: nil))
        harness.at(0, .fix(fix(second: 0, speed: 0)))
        harness.at(10, .request(1, 2, .pause))
        harness.at(20, .request(1, 3, .resume))
        let changes = harness.at(21, .fix(fix(second: 21, speed: 0))).changes(for: 1)
        #expect(changes.map(\.keyPath) == [KeyPath(.myLocation, member: .latitude)])
    }
}
