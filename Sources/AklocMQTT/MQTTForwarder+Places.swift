import AklocCore
import Dispatch

extension MQTTForwarder {
    /// The shared saved places as one retained `waypoints` message on
    /// `<topic>/waypoints`, sent now or on the next connection, and again on
    /// every reconnection (a new list replaces one not yet sent).
    public func publishWaypoints(_ waypoints: [OwnTracksPayload.Waypoint]) {
        dispatchPrecondition(condition: .onQueue(queue))
        let payload = OwnTracksPayload.waypoints(waypoints)
        log(.debug, "MQTT waypoints \(String(decoding: payload, as: UTF8.self))")
        placeMessages.waypoints = payload
        pumpPlaces(reconnected: false)
    }

    /// A region entry or exit as a `transition` on `<topic>/event`. Kept in
    /// memory until a connection takes it (the newest
    /// `PlaceMessages.maxTransitions`); unlike fixes they are not journaled.
    public func publishTransition(
        _ event: OwnTracksPayload.TransitionEvent, waypoint: OwnTracksPayload.Waypoint, location: Location
    ) {
        dispatchPrecondition(condition: .onQueue(queue))
        let payload = OwnTracksPayload.transition(
            event, waypoint: waypoint, location: location, tid: identity.tid, now: wallClock())
        log(.debug, "MQTT transition \(String(decoding: payload, as: UTF8.self))")
        placeMessages.transitions.append(payload)
        if placeMessages.transitions.count > PlaceMessages.maxTransitions {
            placeMessages.transitions.removeFirst(placeMessages.transitions.count - PlaceMessages.maxTransitions)
        }
        pumpPlaces(reconnected: false)
    }

    /// What is waiting to go out; `waypointsSent` says whether this
    /// connection has the current list.
    struct PlaceMessages {
        static let maxTransitions = 256
        var waypoints: [UInt8]? {
            didSet { waypointsSent = false }
        }
        var waypointsSent = false
        var transitions: [[UInt8]] = []
    }

    /// Sends what is waiting, if connected; on a new connection the list again.
    func pumpPlaces(reconnected: Bool) {
        guard let client = connection, client.isConnected else { return }
        if reconnected { placeMessages.waypointsSent = false }
        if let waypoints = placeMessages.waypoints, !placeMessages.waypointsSent {
            do {
                _ = try client.publish(
                    MosquittoClient.Message(
                        topic: identity.topic + "/waypoints", payload: waypoints, qos: Int32(settings.qos), retain: true
                    ))
                placeMessages.waypointsSent = true
            } catch {
                log(.warning, "MQTT: \(error)")
                return
            }
        }
        while let first = placeMessages.transitions.first {
            do {
                _ = try client.publish(
                    MosquittoClient.Message(
                        topic: identity.topic + "/event", payload: first, qos: Int32(settings.qos), retain: false))
            } catch {
                log(.warning, "MQTT: \(error)")
                return
            }
            placeMessages.transitions.removeFirst()
        }
    }
}
