import AklocCore

/// aklocd's clock: `SystemClock` and the timers of the main thread's
/// `EventLoop`, which fire on that thread with no hop to libdispatch's
/// manager thread (a DispatchSourceTimer wakes it, and it wakes the queue's
/// thread: two context switches per timer, several per epoch with the
/// engine's epoch wait). Leeway lets the loop fire nearby timers together.
public final class EventLoopClock: ShellClock {
    public let loop: EventLoop

    public init(loop: EventLoop) {
        self.loop = loop
    }

    public func now() -> Instant { SystemClock.monotonicNow() }
    public func wallNow() -> FixTime { SystemClock.wallNow() }

    public func makeTimer(_ handler: @escaping () -> Void) -> any ShellTimer {
        Timer(loop.makeTimer(handler))
    }

    private final class Timer: ShellTimer {
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
