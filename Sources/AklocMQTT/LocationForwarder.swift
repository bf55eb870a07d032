import AklocCore
import AklocPosix

/// Where the MQTT feature's share of fixes goes: `MQTTForwarder`, or a
/// test's scripted one.
public protocol LocationForwarder: AnyObject {
    func start()
    func stop()
    /// One throttled delivery to the forwarder's engine subscriber.
    func accept(_ location: Location)
    var status: MQTTForwarder.Status { get }
    /// The shared saved places as OwnTracks waypoints.
    func publishWaypoints(_ waypoints: [OwnTracksPayload.Waypoint])
    /// A region entry or exit of the forwarder's monitor.
    func publishTransition(
        _ event: OwnTracksPayload.TransitionEvent, waypoint: OwnTracksPayload.Waypoint, location: Location)
    /// A fix published past the throttle, with its OwnTracks trigger.
    func accept(_ location: Location, trigger: OwnTracksPayload.Trigger)
    /// Where messages on `<topic>/cmd` go.
    func handleCommands(_ handler: @escaping ([UInt8]) -> Void)
    /// The answer to `dump`.
    func publishDump(_ payload: [UInt8])
}

extension LocationForwarder {
    // Test forwarders that only count fixes need not know about places.
    public func publishWaypoints(_ waypoints: [OwnTracksPayload.Waypoint]) {}
    public func publishTransition(
        _ event: OwnTracksPayload.TransitionEvent, waypoint: OwnTracksPayload.Waypoint, location: Location
    ) {}
    public func accept(_ location: Location, trigger: OwnTracksPayload.Trigger) { accept(location) }
    public func handleCommands(_ handler: @escaping ([UInt8]) -> Void) {}
    public func publishDump(_ payload: [UInt8]) {}
}

extension MQTTForwarder: LocationForwarder {
    public func handleCommands(_ handler: @escaping ([UInt8]) -> Void) { onCommand = handler }
    public func accept(_ location: Location) { accept(location, trigger: .timer) }
}
