import CPosix
import Dispatch
import Glibc
import Synchronization

/// One thread that waits in `epoll_wait` itself and runs what is ready:
/// descriptor handlers, timers and jobs, in that thread, with no hop.
///
/// Why (issue 19): on a DispatchQueue every readable descriptor costs two
/// threads: libdispatch's manager thread wakes in its own `epoll_wait`,
/// hands the queue to a worker thread, and both sleep again. gpsd sends each
/// of the 14 to 18 JSON objects of an epoch on its own, so aklocd paid about
/// 3.5 context switches per line, most of its CPU (bench/NOTES.md). Here the
/// loop's thread sleeps in the kernel on the queue's `EventPoller` epoll
/// descriptor directly and calls the handler when it wakes, as the floor's
/// poll loop does.
///
/// The loop serves one DispatchQueue, so everything written for a queue
/// keeps working: `FileDescriptor.watch(_:on:)` with that queue lands in the
/// loop's poller, `dispatchPrecondition(.onQueue(queue))` holds in every
/// handler. For the main queue (`EventLoop.main`, aklocd) the loop also
/// drains the queue itself, as CoreFoundation's RunLoop does on Linux:
/// libdispatch's `_dispatch_get_main_queue_handle_4CF()` is an eventfd that
/// is readable while main-queue work is pending, and
/// `_dispatch_main_queue_callback_4CF` runs that work on the calling thread.
/// So a DispatchSource still on the queue (signals, sd-bus, mosquitto) and an
/// actor's jobs enqueued with `queue.async` run here too, one hop away (the
/// manager thread's), while the descriptors watched through the poller and
/// the loop's timers have none.
///
/// Timers are the loop's own (`makeTimer`), kept in a list and honoured
/// through `epoll_wait`'s timeout, not a timerfd: one fewer descriptor and
/// no `timerfd_settime` per re-arm. The timeout is in milliseconds, rounded
/// up, so a timer fires at most about a millisecond late, never early.
///
/// `run()` must be called on the queue: on the main thread for the main
/// queue, else inside `queue.sync` (tests run a loop on a private queue so).
/// `execute(_:)` and `stop()` may be called from any thread.
public final class EventLoop: @unchecked Sendable {
    // @unchecked: everything but `pending`, `wake` and `stopping` is touched
    // only on `queue` (checked where it matters); those three are atomic or
    // behind their lock.

    public let queue: DispatchQueue
    let poller: EventPoller
    private let wake: Int32
    private let pending = Mutex<[@Sendable () -> Void]>([])
    private let stopping = Atomic<Bool>(false)
    private let drainsMainQueue: Bool
    /// Weak: a timer its owner lets go of is gone (as a DispatchSourceTimer
    /// cancelled in its owner's deinit).
    private var timers: [WeakTimer] = []
    /// Set by a timer that was armed, disarmed, fired or let go of.
    private let timerChanges = TimerChanges()
    /// The earliest deadline and the earliest `deadline + leeway` of the
    /// armed timers, as of the last scan; valid while nothing changed.
    private var scanned: (due: Int64, wake: Int64)?
    private var wakeTarget: ReadyTarget?
    private var mainQueueTarget: ReadyTarget?
    private var mainQueueHandle: Int32 = -1
    private var wakeToken: UInt64 = 0
    private var mainQueueToken: UInt64 = 0

    /// A loop for `queue`, which must have no watched descriptors yet (its
    /// descriptors will be the loop's).
    public convenience init(queue: DispatchQueue) throws(Errno) {
        try self.init(queue: queue, drainsMainQueue: false)
    }

    /// The loop for the main queue, run by the main thread: it also runs
    /// the main queue's work. Make it once, before anything is watched on the
    /// main queue, and call `run()` instead of `dispatchMain()`.
    public static func main() throws(Errno) -> EventLoop {
        dispatchPrecondition(condition: .onQueue(.main))
        return try EventLoop(queue: .main, drainsMainQueue: true)
    }

    private init(queue: DispatchQueue, drainsMainQueue: Bool) throws(Errno) {
        self.queue = queue
        self.drainsMainQueue = drainsMainQueue
        wake = try Syscall.retryingOnEINTR { eventfd(0, O_CLOEXEC | O_NONBLOCK) }
        // The hop is set once the loop exists; a call arriving before cannot
        // happen: nothing is watched through the poller yet.
        let hop = HopBox()
        guard let poller = EventPoller.owned(by: { hop.loop?.perform($0) }, for: queue) else {
            Syscall.close(wake)
            preconditionFailure("EventLoop: the queue already has descriptors watched on it")
        }
        self.poller = poller
        hop.loop = self
    }

    deinit {
        poller.retire()
        Syscall.close(wake)
    }

    /// Shared by the loop and its timers; touched on the loop's thread only.
    final class TimerChanges {
        var changed = true
    }

    private struct WeakTimer {
        weak var timer: EventLoopTimer?
    }

    private final class HopBox: @unchecked Sendable {
        // @unchecked: written once in the loop's init, before any reader.
        weak var loop: EventLoop?
    }

    /// Runs until `stop()`: waits for descriptors, timers and jobs, and runs
    /// them on this thread.
    public func run() {
        dispatchPrecondition(condition: .onQueue(queue))
        register()
        defer { unregister() }
        while !stopping.load(ordering: .acquiring) {
            runJobs()
            let timeout = fireTimers()
            guard !stopping.load(ordering: .acquiring) else { break }
            poller.wait(milliseconds: timeout)
        }
        stopping.store(false, ordering: .releasing)
    }

    /// Ends `run()` after what it is running now; from any thread.
    public func stop() {
        stopping.store(true, ordering: .releasing)
        poke()
    }

    /// Runs `job` on the loop's thread, soon; from any thread.
    public func execute(_ job: @escaping @Sendable () -> Void) {
        pending.withLock { $0.append(job) }
        poke()
    }

    /// `execute` for the poller's hop, whose closures are confined to the
    /// loop's thread by the caller's contract (FileDescriptor).
    fileprivate func perform(_ job: @escaping () -> Void) {
        let sendable = UncheckedJob(body: job)
        execute { sendable.body() }
    }

    private struct UncheckedJob: @unchecked Sendable {
        // @unchecked: runs only on the loop's thread.
        let body: () -> Void
    }

    /// A disarmed timer whose `handler` runs on the loop's thread.
    public func makeTimer(_ handler: @escaping () -> Void) -> EventLoopTimer {
        dispatchPrecondition(condition: .onQueue(queue))
        let timer = EventLoopTimer(handler: handler, changes: timerChanges)
        timers.append(WeakTimer(timer: timer))
        return timer
    }

    /// How many timers are armed (tests check that cancelled ones are gone).
    public var armedTimers: Int {
        timers.count { $0.timer?.deadline != nil }
    }

    private func poke() {
        var one: UInt64 = 1
        // EAGAIN: the counter is full, so the loop is awake anyway.
        _ = try? Syscall.retryingOnEINTR { write(wake, &one, MemoryLayout<UInt64>.size) }
    }

    private func register() {
        let wakeTarget = ReadyTarget { [weak self] in self?.drainWake() }
        self.wakeTarget = wakeTarget
        wakeToken = poller.add(wakeTarget)
        poller.update(wake, token: wakeToken, from: 0, to: EPOLLIN.rawValue)
        guard drainsMainQueue else { return }
        mainQueueHandle = _dispatch_get_main_queue_handle_4CF()
        let mainQueueTarget = ReadyTarget { [weak self] in self?.drainMainQueue() }
        self.mainQueueTarget = mainQueueTarget
        mainQueueToken = poller.add(mainQueueTarget)
        poller.update(mainQueueHandle, token: mainQueueToken, from: 0, to: EPOLLIN.rawValue)
    }

    private func unregister() {
        poller.update(wake, token: wakeToken, from: EPOLLIN.rawValue, to: 0)
        poller.remove(wakeToken)
        wakeTarget = nil
        guard drainsMainQueue else { return }
        poller.update(mainQueueHandle, token: mainQueueToken, from: EPOLLIN.rawValue, to: 0)
        poller.remove(mainQueueToken)
        mainQueueTarget = nil
    }

    private func drainWake() {
        var count: UInt64 = 0
        // EAGAIN: another round already reset it.
        _ = try? Syscall.retryingOnEINTR { read(wake, &count, MemoryLayout<UInt64>.size) }
        runJobs()
    }

    private func drainMainQueue() {
        // Reset first: work queued while draining pokes it again, so it is
        // seen on the next round (libdispatch drains a snapshot).
        var count: UInt64 = 0
        _ = try? Syscall.retryingOnEINTR { read(mainQueueHandle, &count, MemoryLayout<UInt64>.size) }
        _dispatch_main_queue_callback_4CF(nil)
    }

    private func runJobs() {
        // Taken by swap, and only when there are some: this runs on every
        // round, and copying the list out then emptying it in place (which
        // must copy the shared buffer) allocated on every one.
        let jobs: [@Sendable () -> Void] = pending.withLock { jobs in
            guard !jobs.isEmpty else { return [] }
            var taken: [@Sendable () -> Void] = []
            swap(&taken, &jobs)
            return taken
        }
        for job in jobs { job() }
    }

    /// Fires every due timer, earliest deadline first, and returns how long
    /// to wait for the next (milliseconds, -1: none armed, 0: a job is
    /// waiting). Leeway coalesces: the loop sleeps until the earliest
    /// `deadline + leeway`, then fires every timer whose deadline has passed,
    /// so each fires within its window and nearby ones share a wake-up.
    private func fireTimers() -> Int32 {
        var now = PosixClock.monotonic.nanoseconds()
        // This runs on every wake-up (per gpsd object): the list, whose weak
        // references cost an atomic operation each, is scanned only when a
        // timer changed or the earliest deadline has come.
        if timerChanges.changed || (scanned.map { $0.due <= now } ?? false) {
            if scanTimers(at: now) { now = PosixClock.monotonic.nanoseconds() }
        }
        if !pending.withLock({ $0.isEmpty }) { return 0 }
        guard let wakeAt = scanned?.wake else { return -1 }
        let wait = max(0, wakeAt - now)
        // Rounded up: waking before the deadline would only loop again.
        return Int32(clamping: (wait + 999_999) / 1_000_000)
    }

    /// Drops the timers that are gone, fires the due ones and records the
    /// earliest deadlines left; returns whether any fired.
    private func scanTimers(at now: Int64) -> Bool {
        timerChanges.changed = false
        var due = false
        var gone = false
        // By index: iterating copied each weak reference.
        for index in timers.indices {
            guard let timer = timers[index].timer, !timer.isCancelled else {
                gone = true
                continue
            }
            if let deadline = timer.deadline, deadline <= now { due = true }
        }
        if gone { timers.removeAll { $0.timer?.isCancelled ?? true } }
        if due {
            let order = timers.compactMap(\.timer).filter { $0.deadline.map { $0 <= now } ?? false }
                .sorted { ($0.deadline!, $0.sequence) < ($1.deadline!, $1.sequence) }
            // Armed now: a handler that re-arms its timer for a time already
            // past fires again on the next round, not in this one.
            let armed = order.map { $0.sequence }
            for (timer, sequence) in zip(order, armed) where timer.sequence == sequence && timer.deadline != nil {
                timer.fire()
            }
        }
        scanned = earliestDeadlines()
        return due
    }

    /// The earliest deadline and `deadline + leeway` of the armed timers.
    private func earliestDeadlines() -> (due: Int64, wake: Int64)? {
        var earliest: (due: Int64, wake: Int64)?
        for index in timers.indices {
            guard let timer = timers[index].timer, let deadline = timer.deadline else { continue }
            let latest = deadline &+ timer.leeway
            earliest = (min(earliest?.due ?? deadline, deadline), min(earliest?.wake ?? latest, latest))
        }
        return earliest
    }

    /// A descriptor of the loop's own (its wake-up, the main queue's eventfd).
    private final class ReadyTarget: EventPoller.Target {
        let ready: () -> Void
        init(_ ready: @escaping () -> Void) { self.ready = ready }
        func poller(_ poller: EventPoller, didReport events: UInt32) { ready() }
    }
}
