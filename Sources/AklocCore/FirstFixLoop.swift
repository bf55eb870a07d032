/// AKLocationManager's first-fix detection (DESIGN §2) for one subscriber.
///
/// Attempts run at once and then every `attemptInterval`; an attempt succeeds
/// when a fresh fix exists. After `attempts` failures the loop reports
/// `locationManagerCantDetectFirstLocation` once and keeps waiting, so a late
/// first fix is still announced; after the success it is finished.
///
/// Once the error is out, no more timed attempts are needed: an attempt can
/// only succeed because a fix arrived, and the engine reports every arrival
/// through `fixArrived()` at once. The daemon can then sleep instead of
/// waking every second while there is no fix.
public struct FirstFixLoop: Hashable, Sendable {
    public static let attemptInterval: Double = 1

    public enum Outcome: Hashable, Sendable {
        case succeeded
        case cantDetectFirstLocation
    }

    public let attempts: Int
    public private(set) var failures = 0
    public private(set) var succeeded = false
    public private(set) var errorReported = false
    /// When the next timed attempt is due; nil when none is (not yet begun,
    /// finished, or past the error).
    public private(set) var nextAttempt: Instant?

    /// `attempts` below 1 is treated as 1; `Engine.Configuration.validate()`
    /// rejects such values before they get here.
    public init(attempts: Int) {
        self.attempts = max(1, attempts)
    }

    /// Starts (or restarts) the loop with its immediate attempt.
    public mutating func begin(hasFreshFix: Bool, at now: Instant) -> Outcome? {
        failures = 0
        succeeded = false
        errorReported = false
        return attempt(hasFreshFix: hasFreshFix, at: now)
    }

    /// One attempt at `now`. Call it when `nextAttempt` is due; an early call
    /// counts too, which is why the engine only calls it when due.
    public mutating func attempt(hasFreshFix: Bool, at now: Instant) -> Outcome? {
        guard !succeeded else { return nil }
        if hasFreshFix {
            succeeded = true
            nextAttempt = nil
            return .succeeded
        }
        failures += 1
        if failures >= attempts, !errorReported {
            errorReported = true
            nextAttempt = nil
            return .cantDetectFirstLocation
        }
        nextAttempt = errorReported ? nil : now.advanced(bySeconds: FirstFixLoop.attemptInterval)
        return nil
    }

    /// A fix arrived while the loop runs: the attempt it makes possible succeeds now.
    public mutating func fixArrived() -> Outcome? {
        guard !succeeded else { return nil }
        succeeded = true
        nextAttempt = nil
        return .succeeded
    }

    /// Whether a fix received at `receivedAt` is fresh at `now`.
    public static func isFresh(receivedAt: Instant, at now: Instant, maxFixAge: Double) -> Bool {
        now.seconds(since: receivedAt) <= maxFixAge
    }
}
