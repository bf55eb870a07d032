import AklocCore
import AklocPosix

// Virtual time for any test of the shell (a whole embedded daemon, or one
// feature against a fake host): swift-nio's EmbeddedEventLoop idea.

/// A monotonic clock that moves only when the test says so.
public final class ManualClock: ShellClock, @unchecked Sendable {
    public private(set) var current = Instant.seconds(1000)
    /// The wall clock at `current`, moved with it.
    public let wallOrigin = FixTime(secondsSince1970: 1_780_000_000)
    private var timers: [ManualTimer] = []

    public func now() -> Instant { current }

    public func wallNow() -> FixTime {
        let elapsed = current.nanoseconds - Instant.seconds(1000).nanoseconds
        return FixTime(
            secondsSince1970: wallOrigin.secondsSince1970 + elapsed / 1_000_000_000,
            nanoseconds: Int32(elapsed % 1_000_000_000))
    }

    public func makeTimer(_ handler: @escaping () -> Void) -> any ShellTimer {
        let timer = ManualTimer(handler)
        timers.append(timer)
        return timer
    }

    /// Timers armed now, for tests that look.
    public var armedDeadlines: [Instant] { timers.compactMap(\.deadline).sorted() }

    /// Moves time forward, firing every timer whose deadline is passed, in
    /// deadline order, with the clock at that deadline while it runs.
    public init() {}

    public func advance(by seconds: Double) {
        let end = current.advanced(bySeconds: seconds)
        while let next = timers.filter({ $0.deadline.map { $0 <= end } ?? false }).min(by: {
            $0.deadline! < $1.deadline!
        }) {
            current = max(current, next.deadline!)
            next.deadline = nil
            next.handler()
        }
        current = end
        timers.removeAll { $0.isCancelled }
    }

    public final class ManualTimer: ShellTimer {
        let handler: () -> Void
        public internal(set) var deadline: Instant?
        public private(set) var isCancelled = false

        init(_ handler: @escaping () -> Void) {
            self.handler = handler
        }

        public func schedule(at deadline: Instant?, leeway: Double) {
            guard !isCancelled else { return }
            self.deadline = deadline
        }

        public func cancel() {
            isCancelled = true
            deadline = nil
        }
    }
}
