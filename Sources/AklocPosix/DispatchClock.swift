import AklocCore
import Dispatch

/// The real clock with DispatchSourceTimers on a queue (a daemon in a test
/// process, the client library); aklocd itself runs on `EventLoopClock`.
public final class DispatchClock: ShellClock {
    public let queue: DispatchQueue

    public init(queue: DispatchQueue) {
        self.queue = queue
    }

    public func now() -> Instant { SystemClock.monotonicNow() }
    public func wallNow() -> FixTime { SystemClock.wallNow() }

    public func makeTimer(_ handler: @escaping () -> Void) -> any ShellTimer {
        Timer(queue: queue, handler: handler)
    }

    private final class Timer: ShellTimer {
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
