import AklocCore

#if canImport(Glibc)
    import Glibc
#endif

/// The real clocks the daemon runs on; tests inject their own.
public enum SystemClock {
    /// CLOCK_MONOTONIC as an `Instant`: never jumps, so throttling and
    /// "is this fix current" use it.
    public static func monotonicNow() -> Instant {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Instant(nanoseconds: Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec))
    }

    /// CLOCK_REALTIME as a `FixTime`, for `receivedAt`.
    public static func wallNow() -> FixTime {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return FixTime(secondsSince1970: Int64(now.tv_sec), nanoseconds: Int32(now.tv_nsec))
    }
}
