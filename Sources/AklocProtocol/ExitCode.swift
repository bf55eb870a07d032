/// The exit statuses of both executables, from sysexits(3), so a script or
/// a systemd unit reads `akloc` and `aklocd` the same way (docs/cli.md,
/// aklocd(8)).
public enum ExitCode {
    public static let ok: Int32 = 0
    /// Anything else that failed (an error reply, an unexpected answer).
    public static let failure: Int32 = 1
    /// EX_USAGE: a bad command line.
    public static let usage: Int32 = 64
    /// EX_UNAVAILABLE: the daemon cannot be reached, or went away.
    public static let unreachable: Int32 = 69
    /// EX_OSERR: the daemon cannot serve its socket.
    public static let osError: Int32 = 71
    /// EX_NOPERM: forbidden, not authorized, or no permission on the socket.
    public static let forbidden: Int32 = 77
    /// EX_CONFIG: the configuration file is invalid.
    public static let config: Int32 = 78
}
