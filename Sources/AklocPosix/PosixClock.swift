import Glibc

/// The kernel clocks, read with `clock_gettime`. The one place akloc reads
/// time; the core takes it as an argument (`Instant`, `FixTime`), and
/// tests inject their own.
public enum PosixClock: Sendable {
    /// CLOCK_MONOTONIC: never jumps, so intervals and deadlines use it.
    case monotonic
    /// CLOCK_REALTIME: the wall clock, for timestamps people read.
    case realtime

    /// Seconds and nanoseconds since the clock's epoch.
    public func now() -> (seconds: Int64, nanoseconds: Int32) {
        var now = timespec()
        // Cannot fail for these clock ids and a valid pointer.
        clock_gettime(self == .monotonic ? CLOCK_MONOTONIC : CLOCK_REALTIME, &now)
        return (Int64(now.tv_sec), Int32(now.tv_nsec))
    }

    /// The reading as one count of nanoseconds.
    public func nanoseconds() -> Int64 {
        let (seconds, nanoseconds) = now()
        return seconds * 1_000_000_000 + Int64(nanoseconds)
    }
}
