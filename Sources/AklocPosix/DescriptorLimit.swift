import Glibc

/// The process's limit on open descriptors (RLIMIT_NOFILE).
public enum DescriptorLimit {
    /// Raises the soft limit to the hard one; returns the change made, nil
    /// when there was none to make (or the kernel refused).
    public static func raiseToHardLimit() -> (from: UInt64, to: UInt64)? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else {
            return nil
        }
        let from = UInt64(limit.rlim_cur)
        limit.rlim_cur = limit.rlim_max
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return (from, UInt64(limit.rlim_cur))
    }
}
