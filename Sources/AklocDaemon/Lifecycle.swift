import AklocCore
import AklocPosix
import Dispatch

/// The daemon's own life: when it started, its engine timer, the signal
/// sources that stop and reload it, and whether it is stopping.
struct Lifecycle {
    let startedAt: Instant
    var engineTimer: (any ShellTimer)?
    var signalSources: [DispatchSourceSignal] = []
    var stopping = false
}
