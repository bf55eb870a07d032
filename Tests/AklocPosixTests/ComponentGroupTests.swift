import AklocCore
import AklocPosix
import Testing

/// Start in order, stop in reverse, and roll back what started when one fails.
@Suite struct ComponentGroupTests {
    final class Recorder: Component {
        let name: String
        let log: Log
        let fails: Bool
        let failurePolicy: ComponentFailurePolicy

        final class Log {
            var events: [String] = []
        }

        init(_ name: String, _ log: Log, fails: Bool = false, policy: ComponentFailurePolicy = .abortStart) {
            self.name = name
            self.log = log
            self.fails = fails
            failurePolicy = policy
        }

        func start() throws(ComponentError) {
            if fails { throw ComponentError(.startFailed, component: name, "refused") }
            log.events.append("start \(name)")
        }

        func stop() { log.events.append("stop \(name)") }
    }

    @Test func startsInOrderAndStopsInReverse() throws {
        let log = Recorder.Log()
        var group = ComponentGroup([Recorder("a", log), Recorder("b", log), Recorder("c", log)])
        try group.start()
        group.stop()
        group.stop()
        #expect(log.events == ["start a", "start b", "start c", "stop c", "stop b", "stop a"])
    }

    @Test func aFailedStartStopsWhatStartedAndPassesTheErrorOn() {
        let log = Recorder.Log()
        var group = ComponentGroup([Recorder("a", log), Recorder("b", log), Recorder("c", log, fails: true)])
        #expect {
            try group.start()
        } throws: { error in
            (error as? ComponentError).map { $0.code == .startFailed && $0.message == "c: refused" } ?? false
        }
        #expect(log.events == ["start a", "start b", "stop b", "stop a"])
        #expect(group.running == 0)
    }

    /// A component that cannot start (the track recorder without its
    /// directory) must not stop the ones added after it from starting.
    @Test func aComponentThatFailsWhenAddedIsDroppedAndLaterOnesStillStart() throws {
        let log = Recorder.Log()
        var group = ComponentGroup([Recorder("a", log)])
        try group.start()
        #expect(throws: ComponentError.self) { try group.append(Recorder("track", log, fails: true)) }
        try group.append(Recorder("geoclue", log))
        #expect(group.running == 2)
        #expect(group.components.map(\.name) == ["a", "geoclue"])
        group.stop()
        #expect(log.events == ["start a", "start geoclue", "stop geoclue", "stop a"])
    }

    /// The policy is the component's own: one that the daemon can do
    /// without is left out at start, reported once, and the rest start.
    @Test func aComponentThatMayFailIsLeftOutAtStartAndReported() throws {
        let log = Recorder.Log()
        var skipped: [String] = []
        var group = ComponentGroup(
            [Recorder("a", log), Recorder("track", log, fails: true, policy: .logAndContinue), Recorder("c", log)],
            skipped: { skipped.append($0.message) })
        try group.start()
        #expect(group.components.map(\.name) == ["a", "c"])
        #expect(skipped == ["track: refused"])
        group.stop()
        #expect(log.events == ["start a", "start c", "stop c", "stop a"])
    }

    @Test func componentsAddedOrRemovedWhileRunning() throws {
        let log = Recorder.Log()
        let b = Recorder("b", log)
        var group = ComponentGroup([Recorder("a", log)])
        try group.start()
        try group.append(b)
        group.remove(b)
        try group.append(Recorder("c", log))
        group.stop()
        #expect(log.events == ["start a", "start b", "stop b", "start c", "stop c", "stop a"])
    }

    @Test func errorsPrintOneWay() {
        let error = ComponentError(.cannotListen, component: "client server", "bind /run/akloc.sock: denied")
        #expect(error.description == "client server: bind /run/akloc.sock: denied [cannotListen]")
    }
}
