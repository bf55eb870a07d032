import AklocCore

/// The shell's time: the clocks, and one-shot timers whose handlers run on
/// the daemon's queue. Injected into every component and feature, so a test
/// runs a whole daemon, or one feature against a fake host, on virtual time
/// (a clock it advances by hand, timers that fire as it passes their
/// deadlines: swift-nio's EmbeddedEventLoop idea). Named for the shell, not
/// `Clock`, which would shadow the standard library's protocol.
public protocol ShellClock: AnyObject {
    /// The monotonic clock: throttling, deadlines, ages.
    func now() -> Instant
    /// The wall clock, for timestamps people read.
    func wallNow() -> FixTime
    /// A disarmed timer; `handler` runs on the daemon's queue each time it fires.
    func makeTimer(_ handler: @escaping () -> Void) -> any ShellTimer
}

/// A one-shot timer, re-armed by `schedule`.
public protocol ShellTimer: AnyObject {
    /// Fires once at `deadline` (at once when it has passed); nil disarms.
    /// `leeway` is how late it may fire, which lets the kernel batch wake-ups.
    func schedule(at deadline: Instant?, leeway: Double)
    /// Disarms for good.
    func cancel()
}

extension ShellTimer {
    /// Fires `seconds` after `clock`'s now.
    public func schedule(after seconds: Double, on clock: any ShellClock, leeway: Double) {
        schedule(at: clock.now().advanced(bySeconds: seconds), leeway: leeway)
    }
}
