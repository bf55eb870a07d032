import AklocCore

/// The real clocks the daemon runs on, as the core's types; tests inject their own.
public enum SystemClock {
    /// `PosixClock.monotonic` as an `Instant`: never jumps, so throttling and
    /// "is this fix current" use it.
    public static func monotonicNow() -> Instant {
        Instant(nanoseconds: PosixClock.monotonic.nanoseconds())
    }

    /// `PosixClock.realtime` as a `FixTime`, for `receivedAt`.
    public static func wallNow() -> FixTime {
        let (seconds, nanoseconds) = PosixClock.realtime.now()
        return FixTime(secondsSince1970: seconds, nanoseconds: nanoseconds)
    }
}
