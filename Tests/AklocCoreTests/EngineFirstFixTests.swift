import AklocCore
import Testing

@Suite struct EngineFirstFixTests {
    func ready(attempts: Int = 5) -> Harness {
        var harness = Harness(.init(firstLocationAttempts: attempts))
        harness.send(.sourceConnected(name: "gpsd"))
        harness.connect(1)
        return harness
    }

    func firsts(_ outputs: [Engine.Output], _ id: SubscriberID) -> Int {
        outputs.events(for: id).filter { if case .didGetFirstLocation = $0 { true } else { false } }.count
    }

    @Test func succeedsAtOnceWhenAFreshFixExists() {
        var harness = ready()
        harness.at(10, .fix(fix(second: 10)))
        let outputs = harness.at(11.5, .request(1, 1, .startUpdatingLocation(policy: nil, everyEpoch: false)))
        #expect(outputs.events(for: 1) == [.didGetFirstLocation(fix(second: 10))])
        #expect(harness.armed == nil)
    }

    @Test func aStaleFixDoesNotCount() {
        var harness = ready()
        harness.at(10, .fix(fix(second: 10)))
        let outputs = harness.at(12.5, .request(1, 1, .startUpdatingLocation(policy: nil, everyEpoch: false)))
        #expect(firsts(outputs, 1) == 0)
        #expect(harness.armed == .seconds(13.5))
    }

    @Test func failsOnceAfterTheAttemptsThenAnnouncesALateFixAndStops() {
        var harness = ready()
        harness.at(0, .request(1, 1, .startUpdatingLocation(policy: nil, everyEpoch: false)))
        var errorTimes: [Double] = []
        var ticks: [Double] = []
        while let due = harness.armed, due <= .seconds(100) {
            ticks.append(due.seconds)
            let outputs = harness.at(due.seconds, .tick)
            if outputs.events(for: 1).contains(.didGetError(.locationManagerCantDetectFirstLocation)) {
                errorTimes.append(due.seconds)
            }
        }
        // Attempts at 0 (at once), 1, 2, 3, 4: the fifth failure reports.
        #expect(ticks == [1, 2, 3, 4])
        #expect(errorTimes == [4])
        // The daemon may sleep now; a late fix is still announced, once.
        #expect(harness.armed == nil)
        let late = harness.at(40, .fix(fix(second: 40)))
        #expect(firsts(late, 1) == 1)
        #expect(firsts(harness.at(41, .fix(fix(second: 41))), 1) == 0)
        #expect(
            harness.log.events(for: 1).filter { $0 == .didGetError(.locationManagerCantDetectFirstLocation) }.count == 1
        )
    }

    @Test func aFixDuringTheLoopSucceedsAtOnce() {
        var harness = ready()
        harness.at(0, .request(1, 1, .startUpdatingLocation(policy: nil, everyEpoch: false)))
        harness.run(until: 2.5)
        let outputs = harness.at(2.5, .fix(fix(second: 2)))
        #expect(firsts(outputs, 1) == 1)
        #expect(outputs.contains(.armTimer(nil)))
        harness.run(until: 20)
        #expect(!harness.log.events(for: 1).contains(.didGetError(.locationManagerCantDetectFirstLocation)))
    }

    @Test func oneAttemptFailsAtOnce() {
        var harness = ready(attempts: 1)
        let outputs = harness.start(1)
        #expect(outputs.events(for: 1) == [.didGetError(.locationManagerCantDetectFirstLocation)])
        #expect(harness.armed == nil)
    }

    @Test func theLoopRerunsWhenTheSourceComesBack() {
        var harness = ready()
        harness.start(1)
        harness.at(0.5, .fix(fix(second: 0)))
        harness.at(5, .sourceDisconnected)
        let back = harness.at(20, .sourceConnected(name: "gpsd"))
        #expect(back.notifications(for: 1) == [.sourceConnected])
        #expect(harness.armed == .seconds(21))
        #expect(firsts(harness.at(20.5, .fix(fix(second: 20))), 1) == 1)
    }

    @Test func invalidConfigurationIsRejectedWhenRestoring() {
        #expect(throws: EngineConfigurationError.self) {
            try Engine(configuration: .init(firstLocationAttempts: 0), restoring: PersistentState())
        }
    }
}
