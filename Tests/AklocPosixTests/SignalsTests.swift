import AklocPosix
import Glibc
import Synchronization
import Testing

/// Set by `countUser2`, the handler the disposition test installs.
private let user2Count = Atomic<Int>(0)

private func countUser2(_: Int32) {
    user2Count.add(1, ordering: .relaxed)
}

/// Signal, SignalSet and SignalMask on this thread. Every signal the tests
/// raise is thread-directed (pthread_kill to the test's own thread), so a
/// test runner thread that does not block it never receives it.
@Suite(.serialized) struct SignalsTests {
    let user1 = Signal(rawValue: SIGUSR1)
    let user2 = Signal(rawValue: SIGUSR2)

    @Test func aSetHoldsWhatWasInserted() {
        var set = SignalSet([.terminate, .interrupt])
        #expect(set.contains(.terminate) && set.contains(.interrupt))
        #expect(!set.contains(.hangup))
        set.insert(.hangup)
        #expect(set.contains(.hangup))
        #expect(!SignalSet().contains(.terminate))
        #expect(SignalSet.all.contains(.pipe) && SignalSet.all.contains(user2))
        #expect(Signal.terminate.description == "SIGTERM" && user1.description == "signal \(SIGUSR1)")
    }

    /// Whether this thread blocks `signal` now (a block of nothing changes nothing).
    private func blocks(_ signal: Signal) throws -> Bool {
        try SignalMask.block(SignalSet()).contains(signal)
    }

    // The test runner hands its threads a mask of its own (most signals
    // blocked): each test unblocks what it raises and restores the mask.

    @Test func blockReturnsThePreviousMaskAndRestorePutsItBack() throws {
        let runners = try SignalMask.unblock(SignalSet([user1]))
        defer { try? SignalMask.restore(runners) }
        #expect(try !blocks(user1))
        let previous = try SignalMask.block(SignalSet([user1]))
        #expect(!previous.contains(user1))
        #expect(try blocks(user1))
        let blocked = try SignalMask.unblock(SignalSet([user1]))
        #expect(blocked.contains(user1))
        #expect(try !blocks(user1))
        try SignalMask.block(SignalSet([user1]))
        try SignalMask.restore(previous)
        #expect(try !blocks(user1))
    }

    @Test func aBlockedSignalIsPendingUntilTaken() throws {
        let runners = try SignalMask.unblock(SignalSet([user1]))
        defer { try? SignalMask.restore(runners) }
        let user1 = user1
        SignalMask.withBlocked(SignalSet([user1])) { previous in
            #expect(!previous.contains(user1))
            #expect(!SignalSet.pending().contains(user1))
            #expect(SignalSet([user1]).takePending() == nil, "nothing pending, nothing taken, no wait")
            pthread_kill(pthread_self(), user1.rawValue)
            #expect(SignalSet.pending().contains(user1))
            #expect(SignalSet([user1]).takePending() == user1)
            #expect(!SignalSet.pending().contains(user1))
        }
        #expect(try !blocks(user1), "withBlocked restores the mask")
    }

    @Test func dispositionsHandleIgnoreAndRestoreTheDefault() throws {
        let runners = try SignalMask.unblock(SignalSet([user2]))
        defer { try? SignalMask.restore(runners) }
        defer { try? user2.setDisposition(.systemDefault) }
        try user2.setDisposition(.handler(countUser2))
        let start = user2Count.load(ordering: .relaxed)
        // Unblocked and sent to this thread, it is handled before pthread_kill returns.
        pthread_kill(pthread_self(), user2.rawValue)
        #expect(user2Count.load(ordering: .relaxed) == start + 1)
        // Ignored, the signal does nothing (its default would end the test runner).
        try user2.setDisposition(.ignore)
        pthread_kill(pthread_self(), user2.rawValue)
        #expect(user2Count.load(ordering: .relaxed) == start + 1)
    }

    @Test func sendingFailsAsErrno() {
        #expect(throws: Errno(rawValue: ESRCH)) { try Signal.terminate.send(to: Int32.max) }
        #expect(throws: Errno.invalidArgument) { try Signal(rawValue: 4096).send(to: getpid()) }
        #expect(throws: Errno.invalidArgument) { try Signal(rawValue: SIGKILL).setDisposition(.ignore) }
        #expect(Signal.processExists(getpid()))
        #expect(!Signal.processExists(Int32.max))
    }
}
