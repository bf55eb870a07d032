import AklocPosix
import Dispatch
import Glibc
import Testing

/// EventLoop on real descriptors and the real monotonic clock: each test
/// runs a loop on its own thread (inside `queue.sync`, as the loop requires)
/// and waits on semaphores its handlers signal; the timeouts only keep a
/// broken loop from hanging the suite.
@Suite struct EventLoopTests {
    /// A loop running on a thread of its own until `stop()`.
    final class Running: @unchecked Sendable {
        // @unchecked: `loop` is Sendable; the rest is set before the thread starts.
        let queue = DispatchQueue(label: "event-loop-test")
        let loop: EventLoop
        private let finished = DispatchSemaphore(value: 0)
        private let mark = DispatchSpecificKey<Bool>()

        init() throws {
            loop = try EventLoop(queue: queue)
            queue.setSpecific(key: mark, value: true)
            DispatchQueue.global().async { [self] in
                queue.sync { loop.run() }
                finished.signal()
            }
        }

        /// Whether the caller is on the loop's thread, inside `run()`.
        var onLoop: Bool { DispatchQueue.getSpecific(key: mark) == true }

        /// Runs `body` on the loop and waits for it.
        func sync<T>(_ body: @escaping @Sendable () -> T) -> T {
            let done = DispatchSemaphore(value: 0)
            let result = Box<T?>(nil)
            loop.execute {
                result.value = body()
                done.signal()
            }
            precondition(done.wait(timeout: .now() + 10) == .success, "the loop ran no job within 10 s")
            return result.value!
        }

        /// Stops the loop; true when `run()` returned.
        func stop() -> Bool {
            loop.stop()
            return finished.wait(timeout: .now() + 10) == .success
        }
    }

    /// Shared between a test and its loop's thread; the semaphores order the accesses.
    final class Box<T>: @unchecked Sendable {
        var value: T
        init(_ value: T) { self.value = value }
    }

    /// A connected pair; ours non-blocking and owned by a FileDescriptor.
    private static func pair() throws -> (FileDescriptor, Int32) {
        var fds: [Int32] = [-1, -1]
        try Syscall.retryingOnEINTR { socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        return (FileDescriptor(adopting: fds[0]), fds[1])
    }

    private static func send(_ fd: Int32, _ text: String) {
        // MSG_NOSIGNAL: a write to a closed peer is an error here, not SIGPIPE.
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// What `fd` holds now (empty at end of file or when nothing is there).
    private static func receive(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
    }

    private static func milliseconds(_ value: Int64) -> Int64 { value * 1_000_000 }

    @Test func aReadyDescriptorsHandlerRunsOnTheLoopThenItsHangUp() throws {
        let running = try Running()
        let (ours, peer) = try Self.pair()
        let wrapped = Box(ours)
        let seen = Box<[String]>([])
        let event = DispatchSemaphore(value: 0)
        _ = running.sync {
            wrapped.value.watch(.readable, on: running.queue) {
                precondition(running.onLoop)
                let text = Self.receive(wrapped.value.rawValue)
                seen.value.append(text.isEmpty ? "hang-up" : text)
                if text.isEmpty { wrapped.value.close() }
                event.signal()
            }
        }
        Self.send(peer, "hello")
        #expect(event.wait(timeout: .now() + 10) == .success)
        close(peer)
        #expect(event.wait(timeout: .now() + 10) == .success)
        #expect(running.sync { seen.value } == ["hello", "hang-up"])
        #expect(running.stop())
    }

    @Test func timersFireEarliestDeadlineFirstWhateverTheOrderTheyWereArmedIn() throws {
        let running = try Running()
        let fired = Box<[String]>([])
        let done = DispatchSemaphore(value: 0)
        let timers = running.sync { () -> [EventLoopTimer] in
            let now = PosixClock.monotonic.nanoseconds()
            let plan: [(String, Int64)] = [("c", 30), ("a", 10), ("b", 20), ("past", -5)]
            return plan.map { name, offset in
                let timer = running.loop.makeTimer {
                    precondition(running.onLoop)
                    fired.value.append(name)
                    if fired.value.count == plan.count { done.signal() }
                }
                timer.schedule(at: now + Self.milliseconds(offset))
                return timer
            }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(running.sync { fired.value } == ["past", "a", "b", "c"])
        #expect(running.sync { running.loop.armedTimers } == 0)
        withExtendedLifetime(timers) {}
        #expect(running.stop())
    }

    @Test func aTimerReArmedFromItsOwnHandlerFiresAgain() throws {
        let running = try Running()
        let count = Box(0)
        let done = DispatchSemaphore(value: 0)
        let timer = Box<EventLoopTimer?>(nil)
        running.sync {
            timer.value = running.loop.makeTimer {
                count.value += 1
                if count.value == 3 {
                    done.signal()
                } else {
                    // Already past: it fires on the next round, not in this one.
                    timer.value?.schedule(at: PosixClock.monotonic.nanoseconds() - 1)
                }
            }
            timer.value?.schedule(at: PosixClock.monotonic.nanoseconds() + Self.milliseconds(5))
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(running.sync { (count.value, timer.value?.deadline) } == (3, nil))
        #expect(running.stop())
    }

    @Test func aCancelledDisarmedOrReleasedTimerNeverFires() throws {
        let running = try Running()
        let fired = Box<[String]>([])
        let done = DispatchSemaphore(value: 0)
        let kept = running.sync { () -> [EventLoopTimer] in
            let now = PosixClock.monotonic.nanoseconds()
            let record = { (name: String) in { fired.value.append(name) } }
            // Both due in the same round: the earlier one's handler cancels the other.
            let victim = running.loop.makeTimer(record("victim"))
            let canceller = running.loop.makeTimer {
                fired.value.append("canceller")
                victim.cancel()
            }
            canceller.schedule(at: now - 2)
            victim.schedule(at: now - 1)
            let disarmed = running.loop.makeTimer(record("disarmed"))
            disarmed.schedule(at: now + Self.milliseconds(5))
            disarmed.schedule(at: nil)
            // Let go of at once: as a DispatchSourceTimer cancelled in its owner's deinit.
            running.loop.makeTimer(record("released")).schedule(at: now + Self.milliseconds(5))
            let last = running.loop.makeTimer {
                fired.value.append("last")
                done.signal()
            }
            last.schedule(at: now + Self.milliseconds(40))
            return [victim, canceller, disarmed, last]
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(running.sync { fired.value } == ["canceller", "last"])
        #expect(running.sync { running.loop.armedTimers } == 0)
        withExtendedLifetime(kept) {}
        #expect(running.stop())
    }

    /// The loop keeps the earliest deadline of its last scan: a timer moved
    /// while the loop sleeps towards its old deadline must still wake it.
    @Test func aTimerMovedEarlierWhileTheLoopSleepsFiresAtItsNewTime() throws {
        let running = try Running()
        let firedAt = Box<Int64?>(nil)
        let done = DispatchSemaphore(value: 0)
        let timer = Box<EventLoopTimer?>(nil)
        running.sync {
            timer.value = running.loop.makeTimer {
                firedAt.value = PosixClock.monotonic.nanoseconds()
                done.signal()
            }
            timer.value?.schedule(at: PosixClock.monotonic.nanoseconds() + Self.milliseconds(60_000))
        }
        // The loop now sleeps towards a minute from now; this job wakes it.
        let moved = running.sync { () -> Int64 in
            let at = PosixClock.monotonic.nanoseconds() + Self.milliseconds(20)
            timer.value?.schedule(at: at)
            timer.value?.schedule(at: at)  // the same time again: no change, still armed
            return at
        }
        #expect(done.wait(timeout: .now() + 10) == .success, "it fired at its new time, not a minute later")
        #expect(running.sync { firedAt.value.map { $0 >= moved } } == true)
        #expect(running.sync { running.loop.armedTimers } == 0)
        #expect(running.stop())
    }

    @Test func leewayLetsAnEarlyTimerWaitForALaterOnesWakeUp() throws {
        let running = try Running()
        let firedAt = Box<[String: Int64]>([:])
        let done = DispatchSemaphore(value: 0)
        let deadlines = Box<(early: Int64, late: Int64)>((0, 0))
        let kept = running.sync { () -> [EventLoopTimer] in
            let now = PosixClock.monotonic.nanoseconds()
            deadlines.value = (now + Self.milliseconds(10), now + Self.milliseconds(60))
            let early = running.loop.makeTimer { firedAt.value["early"] = PosixClock.monotonic.nanoseconds() }
            let late = running.loop.makeTimer {
                firedAt.value["late"] = PosixClock.monotonic.nanoseconds()
                done.signal()
            }
            early.schedule(at: deadlines.value.early, leeway: Self.milliseconds(200))
            late.schedule(at: deadlines.value.late)
            return [early, late]
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        let (times, windows) = running.sync { (firedAt.value, deadlines.value) }
        let (early, late) = (windows.early, windows.late)
        // Within its window, and held back to the later timer's wake-up.
        #expect(times["early"].map { $0 >= late && $0 <= early + Self.milliseconds(200) } == true)
        #expect(times["late"].map { $0 >= late } == true)
        withExtendedLifetime(kept) {}
        #expect(running.stop())
    }

    @Test func jobsFromOtherThreadsWakeAnIdleLoopAndRunOnIt() throws {
        let running = try Running()
        let count = Box(0)
        let done = DispatchSemaphore(value: 0)
        let threads = 4
        let jobsEach = 100
        // No timer and no descriptor: only the loop's wake-up can end its wait.
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<jobsEach {
                running.loop.execute {
                    precondition(running.onLoop)
                    count.value += 1
                    if count.value == threads * jobsEach { done.signal() }
                }
            }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(running.sync { count.value } == threads * jobsEach)
        #expect(running.stop())
    }

    @Test func aHandlerThatClosesAnotherDescriptorReadyInTheSameRoundStopsItsHandler() throws {
        let running = try Running()
        let (first, firstPeer) = try Self.pair()
        let (second, secondPeer) = try Self.pair()
        let descriptors = Box([first, second])
        let called = Box<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        running.sync {
            for (index, descriptor) in descriptors.value.enumerated() {
                _ = descriptor.watch(.readable, on: running.queue) {
                    called.value.append(index)
                    _ = Self.receive(descriptor.rawValue)
                    descriptors.value[1 - index].close()
                    // Runs after the rest of this round's events.
                    running.loop.execute { done.signal() }
                }
            }
            // Both readable before the loop's next wait, so one round reports both.
            Self.send(firstPeer, "1")
            Self.send(secondPeer, "2")
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        let (calls, closed) = running.sync { (called.value, descriptors.value.map(\.isClosed)) }
        #expect(calls.count == 1)
        #expect(closed.filter { $0 }.count == 1)
        running.sync { descriptors.value.forEach { $0.close() } }
        close(firstPeer)
        close(secondPeer)
        #expect(running.stop())
    }

    @Test func closingFromAnotherThreadRunsOnTheLoop() throws {
        let running = try Running()
        let (ours, peer) = try Self.pair()
        let wrapped = Box(ours)
        let calls = Box(0)
        _ = running.sync { wrapped.value.watch(.readable, on: running.queue) { calls.value += 1 } }
        let closed = DispatchSemaphore(value: 0)
        let onLoop = Box(false)
        // This thread is not the loop's: the close hops onto it.
        wrapped.value.close {
            onLoop.value = running.onLoop
            closed.signal()
        }
        #expect(closed.wait(timeout: .now() + 10) == .success)
        Self.send(peer, "late")
        #expect(running.sync { (onLoop.value, wrapped.value.isClosed, calls.value) } == (true, true, 0))
        close(peer)
        #expect(running.stop())
    }
}
