import AklocCore
import Dispatch

/// OwnTracks commands (docs/mqtt.md, "Commands"): the forwarder subscribes
/// to `<topic>/cmd` while `[mqtt] commands` names any, hands each message
/// to `onCommand` (the feature parses and carries it out), and publishes
/// the answers that are not locations or waypoints.
extension MQTTForwarder {
    /// The command topic: the location topic's `/cmd`, as the apps use.
    public var commandTopic: String { identity.topic + "/cmd" }

    var commandSubscriptions: [String] { settings.commands.isEmpty ? [] : [commandTopic] }

    func received(topic: String, payload: [UInt8]) {
        guard topic == commandTopic else { return }
        onCommand?(payload)
    }

    /// The answer to `dump` on `<topic>/dump`, not retained: it answers a
    /// message that came over this connection, so it goes out now or not
    /// at all (a command sent while aklocd was away is not queued either).
    public func publishDump(_ payload: [UInt8]) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let client = connection, client.isConnected else { return }
        do {
            _ = try client.publish(
                MosquittoClient.Message(
                    topic: identity.topic + "/dump", payload: payload, qos: Int32(settings.qos), retain: false))
        } catch {
            log(.warning, "MQTT: \(error)")
        }
    }
}
