import AklocCore
import AklocPosix

/// The durable state's store and when the last location is next saved
/// (`LocationSaveSchedule`), with the timer that does it.
struct StatePersistence {
    /// Nil: nothing is kept on disk (an embedded test's daemon).
    let store: StateStore?
    var schedule = LocationSaveSchedule()
    var timer: (any ShellTimer)?
}
