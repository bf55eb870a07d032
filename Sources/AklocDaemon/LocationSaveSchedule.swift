import AklocCore

/// When the daemon writes the last location to the state file.
///
/// The engine asks for a save (`.persist`) only when the paused flag or an
/// authorization decision changes: a save per fix would be a disk write per
/// second. So that a crash or SIGKILL still leaves a recent last location,
/// the daemon saves the first fix of its run at once, then at most once per
/// `interval` while fixes keep coming: a kill loses at most `interval`
/// seconds of movement. Pure, so the policy is tested with a manual clock.
struct LocationSaveSchedule: Hashable, Sendable {
    static let defaultInterval = 30.0

    var interval: Double
    /// When the state file was last written (for any reason) in this run.
    private(set) var lastSave: Instant?
    /// When the pending save is due; nil when none is pending.
    private(set) var due: Instant?

    init(interval: Double = LocationSaveSchedule.defaultInterval) {
        self.interval = interval
    }

    /// A new fix arrived at `now`. Returns the deadline to arm a timer for,
    /// or nil when a save is already pending (it will write this fix too).
    mutating func fixArrived(at now: Instant) -> Instant? {
        guard due == nil else { return nil }
        let deadline = lastSave.map { max(now, $0.advanced(bySeconds: interval)) } ?? now
        due = deadline
        return deadline
    }

    /// Whether a save is pending (its timer is armed).
    var isPending: Bool { due != nil }

    /// The state file was written at `now`, last location included: any
    /// pending save is covered by it.
    mutating func saved(at now: Instant) {
        lastSave = now
        due = nil
    }
}
