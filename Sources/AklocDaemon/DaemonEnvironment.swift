import AklocCore
import AklocGPSD
import AklocPosix
import Dispatch

/// What the daemon runs on: its clock and timers, where clients come from,
/// and how its fix source and forwarder are made. The defaults are the real
/// ones; the embedded-daemon tests pass a manual clock, `.none` for the
/// listener (in-memory clients are handed in), and sources they drive.
struct DaemonEnvironment: Sendable {
    /// The daemon's queue: aklocd's is the main queue, run by its EventLoop
    /// (DaemonMain); nil: a private serial queue (tests).
    var queue: DispatchQueue?
    var makeClock: @Sendable (DispatchQueue) -> any ShellClock = { DispatchClock(queue: $0) }
    /// nil: the socket systemd passed, else `--socket` or `[socket] path`.
    var listening: ClientServer.Listening?
    /// nil: a `GPSDSource` on the endpoint and device.
    var makeSource: (@Sendable (GPSDEndpoint, _ device: String?) -> any FixSource)?
    /// The features, in start order (`FeaturePlug.all`); a test may plug its own.
    var features: [FeaturePlug] = FeaturePlug.all
}

/// Where fixes come from: the gpsd source in the daemon.
protocol FixSource: Component {
    var onEvent: ((GPSDSource.Event) -> Void)? { get set }
    /// For `status` and logs, e.g. "gpsd://127.0.0.1:2947".
    var sourceName: String { get }
    /// Turns the watch on or off (the engine's `.watch` output).
    func setWatch(_ enabled: Bool)
}

extension GPSDSource: FixSource {
    public var name: String { "gpsd source" }
    var sourceName: String { status.name }
}
