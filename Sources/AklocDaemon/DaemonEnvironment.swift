import AklocCore
import AklocGPSD
import AklocMQTT
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
    /// nil: an `MQTTForwarder` with these settings and identity, on the daemon's queue.
    var makeForwarder: (@Sendable (MQTTSettings, MQTTSettings.Identity, DispatchQueue) -> any LocationForwarder)?
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

/// Where the forwarder's share of fixes goes: the MQTT forwarder in the daemon.
protocol LocationForwarder: Component {
    /// One throttled delivery to the forwarder's engine subscriber.
    func accept(_ location: Location)
    var status: MQTTForwarder.Status { get }
    /// The shared saved places as OwnTracks waypoints (Daemon+PlacesMQTT.swift).
    func publishWaypoints(_ waypoints: [OwnTracksPayload.Waypoint])
    /// A region entry or exit of the forwarder's monitor.
    func publishTransition(
        _ event: OwnTracksPayload.TransitionEvent, waypoint: OwnTracksPayload.Waypoint, location: Location)
}

extension LocationForwarder {
    // Test forwarders that only count fixes need not know about places.
    func publishWaypoints(_ waypoints: [OwnTracksPayload.Waypoint]) {}
    func publishTransition(
        _ event: OwnTracksPayload.TransitionEvent, waypoint: OwnTracksPayload.Waypoint, location: Location
    ) {}
}

extension MQTTForwarder: LocationForwarder {
    public var name: String { "MQTT forwarder" }
    func accept(_ location: Location) { accept(location, trigger: .timer) }
}
