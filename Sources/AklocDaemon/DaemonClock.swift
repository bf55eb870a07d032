import AklocCore
import AklocGPSD
import AklocPosix
import Dispatch

/// The daemon's time: the clocks, and one-shot timers whose handlers run on
/// the daemon's queue. Injected, so a test can run the whole daemon on
/// virtual time (a clock it advances by hand, timers that fire as it
/// passes their deadlines: swift-nio's EmbeddedEventLoop idea).
protocol DaemonClock: AnyObject {
    /// The monotonic clock: throttling, deadlines, ages.
    func now() -> Instant
    /// The wall clock, for timestamps people read.
    func wallNow() -> FixTime
    /// A disarmed timer; `handler` runs on the daemon's queue each time it fires.
    func makeTimer(_ handler: @escaping () -> Void) -> any DaemonTimer
}

/// A one-shot timer, re-armed by `schedule`.
protocol DaemonTimer: AnyObject {
    /// Fires once at `deadline` (at once when it has passed); nil disarms.
    /// `leeway` is how late it may fire, which lets the kernel batch wake-ups.
    func schedule(at deadline: Instant?, leeway: Double)
    /// Disarms for good.
    func cancel()
}

/// The real clock: `SystemClock` and DispatchSourceTimers on the daemon's queue.
final class DispatchClock: DaemonClock {
    let queue: DispatchQueue

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    func now() -> Instant { SystemClock.monotonicNow() }
    func wallNow() -> FixTime { SystemClock.wallNow() }

    func makeTimer(_ handler: @escaping () -> Void) -> any DaemonTimer {
        Timer(queue: queue, handler: handler)
    }

    private final class Timer: DaemonTimer {
        private let source: any DispatchSourceTimer

        init(queue: DispatchQueue, handler: @escaping () -> Void) {
            source = DispatchSource.makeTimerSource(queue: queue)
            source.setEventHandler(handler: handler)
            source.schedule(deadline: .distantFuture)
            source.activate()
        }

        deinit { source.cancel() }

        func schedule(at deadline: Instant?, leeway: Double) {
            guard let deadline else {
                source.schedule(deadline: .distantFuture)
                return
            }
            let delay = max(0, deadline.seconds(since: SystemClock.monotonicNow()))
            source.schedule(
                deadline: .now() + .nanoseconds(Int(delay * 1e9)), leeway: .nanoseconds(Int(max(0, leeway) * 1e9)))
        }

        func cancel() { source.cancel() }
    }
}

/// aklocd's clock: `SystemClock` and the timers of the main thread's
/// `EventLoop`, which fire on that thread with no hop to libdispatch's
/// manager thread (a DispatchSourceTimer wakes it, and it wakes the queue's
/// thread: two context switches per timer, several per epoch with the
/// engine's epoch wait). Leeway lets the loop fire nearby timers together.
final class EventLoopClock: DaemonClock {
    let loop: EventLoop

    init(loop: EventLoop) {
        self.loop = loop
    }

    func now() -> Instant { SystemClock.monotonicNow() }
    func wallNow() -> FixTime { SystemClock.wallNow() }

    func makeTimer(_ handler: @escaping () -> Void) -> any DaemonTimer {
        Timer(loop.makeTimer(handler))
    }

    private final class Timer: DaemonTimer {
        private let timer: EventLoopTimer

        init(_ timer: EventLoopTimer) {
            self.timer = timer
        }

        deinit { timer.cancel() }

        func schedule(at deadline: Instant?, leeway: Double) {
            timer.schedule(at: deadline?.nanoseconds, leeway: Int64((max(0, leeway) * 1e9).rounded()))
        }

        func cancel() { timer.cancel() }
    }
}
