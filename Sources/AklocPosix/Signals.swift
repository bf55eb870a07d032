import Glibc

/// A signal number, named as swift-system names its constants.
public struct Signal: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    public static let hangup = Signal(rawValue: SIGHUP)
    public static let interrupt = Signal(rawValue: SIGINT)
    public static let terminate = Signal(rawValue: SIGTERM)
    public static let pipe = Signal(rawValue: SIGPIPE)
    public static let kill = Signal(rawValue: SIGKILL)

    /// "SIGTERM" for the signals named here, else "signal N".
    public var description: String {
        let names = [SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGTERM: "SIGTERM", SIGPIPE: "SIGPIPE", SIGKILL: "SIGKILL"]
        return names[rawValue] ?? "signal \(rawValue)"
    }

    /// What the process does on this signal from now on.
    public enum Disposition: Sendable {
        case ignore
        case systemDefault
        /// A C function: it may only call async-signal-safe functions (`_exit`, `write`).
        case handler(@convention(c) (Int32) -> Void)
    }

    /// Sets the process-wide disposition (sigaction(2), no SA_RESTART: every
    /// blocking call goes through `Syscall`, which retries on EINTR).
    public func setDisposition(_ disposition: Disposition) throws(Errno) {
        var action = sigaction()
        switch disposition {
        case .ignore: action.__sigaction_handler.sa_handler = SIG_IGN
        case .systemDefault: action.__sigaction_handler.sa_handler = SIG_DFL
        case .handler(let function): action.__sigaction_handler.sa_handler = function
        }
        sigemptyset(&action.sa_mask)
        try Syscall.retryingOnEINTR { sigaction(rawValue, &action, nil) }
    }

    /// Sends this signal to `pid` (kill(2)); a negative `pid` is a process group.
    public func send(to pid: pid_t) throws(Errno) {
        try Syscall.retryingOnEINTR { Glibc.kill(pid, rawValue) }
    }

    /// Whether `pid` exists (kill(2) with signal 0); EPERM means it exists
    /// under another user.
    public static func processExists(_ pid: pid_t) -> Bool {
        Glibc.kill(pid, 0) == 0 || errno == EPERM
    }
}

/// A set of signals (sigset_t).
public struct SignalSet: Sendable {
    fileprivate var raw = sigset_t()

    /// The empty set.
    public init() {
        sigemptyset(&raw)
    }

    public init(_ signals: [Signal]) {
        self.init()
        for signal in signals { insert(signal) }
    }

    /// Every signal.
    public static var all: SignalSet {
        var set = SignalSet()
        sigfillset(&set.raw)
        return set
    }

    public mutating func insert(_ signal: Signal) {
        sigaddset(&raw, signal.rawValue)
    }

    public func contains(_ signal: Signal) -> Bool {
        Swift.withUnsafePointer(to: raw) { sigismember($0, signal.rawValue) == 1 }
    }

    /// The set as C wants it, for a call that takes a `sigset_t` (posix_spawnattr_setsigmask).
    public func withUnsafePointer<T>(_ body: (UnsafePointer<sigset_t>) throws -> T) rethrows -> T {
        try Swift.withUnsafePointer(to: raw, body)
    }

    /// The signals raised for this thread or the process while blocked (sigpending(2)).
    public static func pending() -> SignalSet {
        var set = SignalSet()
        sigpending(&set.raw)
        return set
    }

    /// Takes one of these signals if one is pending, without waiting
    /// (sigtimedwait(2) with a zero timeout): for a signal the caller blocked
    /// and now discards. Returns the signal taken, nil when none was pending.
    @discardableResult
    public func takePending() -> Signal? {
        var immediately = timespec()
        let taken = withUnsafePointer { sigtimedwait($0, nil, &immediately) }
        return taken > 0 ? Signal(rawValue: taken) : nil
    }
}

/// The calling thread's signal mask (pthread_sigmask(3)). Each change
/// returns the mask before it, for `restore`.
public enum SignalMask {
    @discardableResult
    public static func block(_ signals: SignalSet) throws(Errno) -> SignalSet {
        try change(SIG_BLOCK, signals)
    }

    @discardableResult
    public static func unblock(_ signals: SignalSet) throws(Errno) -> SignalSet {
        try change(SIG_UNBLOCK, signals)
    }

    /// Sets the mask back to one an earlier change returned.
    public static func restore(_ previous: SignalSet) throws(Errno) {
        _ = try change(SIG_SETMASK, previous)
    }

    /// Runs `body` with `signals` blocked on this thread, then restores the mask.
    public static func withBlocked<T>(_ signals: SignalSet, _ body: (_ previous: SignalSet) -> T) -> T {
        // Blocking a valid set on this thread cannot fail (EINVAL is for a bad `how`).
        let previous = (try? block(signals)) ?? SignalSet()
        defer { try? restore(previous) }
        return body(previous)
    }

    private static func change(_ how: Int32, _ signals: SignalSet) throws(Errno) -> SignalSet {
        var previous = SignalSet()
        let result = signals.withUnsafePointer { pthread_sigmask(how, $0, &previous.raw) }
        // pthread_sigmask returns the error number instead of setting errno.
        guard result == 0 else { throw Errno(rawValue: result) }
        return previous
    }
}
