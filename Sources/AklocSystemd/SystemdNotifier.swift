import AklocPosix
import CSystemd
import Glibc

/// Service-manager notifications (sd_notify(3)) for `Type=notify` and
/// `Type=notify-reload` units.
///
/// Every call is a no-op when `NOTIFY_SOCKET` is unset, so the daemon can
/// notify unconditionally. The environment is never unset: the watchdog
/// and later notifications need it for the daemon's whole life.
public struct SystemdNotifier: Sendable {
    /// Whether a service manager is listening (`NOTIFY_SOCKET` is set).
    /// Read once: the daemon asks after every gpsd fix, and the
    /// environment is never unset (above).
    public let isEnabled: Bool

    public init() {
        isEnabled = getenv("NOTIFY_SOCKET") != nil
    }

    /// `READY=1`: start-up finished (the socket is served), or a reload finished.
    public func ready() throws(Errno) {
        try send("READY=1")
    }

    /// `STATUS=`: a one-line status in words, shown by `systemctl status`.
    public func status(_ text: String) throws(Errno) {
        // A newline would start a new assignment in the datagram.
        let line = String(text.map { $0.isNewline ? " " : $0 })
        try send("STATUS=\(line)")
    }

    /// `RELOADING=1` with `MONOTONIC_USEC=`: systemd >= 253 requires the
    /// timestamp for `Type=notify-reload` and ignores it before.
    public func reloading() throws(Errno) {
        try send("RELOADING=1\nMONOTONIC_USEC=\(Self.monotonicMicroseconds())")
    }

    /// `STOPPING=1`: shutdown has begun.
    public func stopping() throws(Errno) {
        try send("STOPPING=1")
    }

    /// `WATCHDOG=1`: keep-alive ping, due every `watchdogInterval`.
    public func watchdog() throws(Errno) {
        try send("WATCHDOG=1")
    }

    /// Half of `WATCHDOG_USEC` (as sd_watchdog_enabled(3) advises) when the
    /// watchdog is enabled for this process, nil otherwise.
    public var watchdogInterval: Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(Int64(clamping: usec / 2))
    }

    /// Sends raw `KEY=value` lines; the named methods cover what akloc uses.
    public func send(_ state: String) throws(Errno) {
        try Syscall.retryingNegativeErrnoOnEINTR { sd_notify(0, state) }
    }

    static func monotonicMicroseconds() -> UInt64 {
        UInt64(PosixClock.monotonic.nanoseconds() / 1000)
    }
}
