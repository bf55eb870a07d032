import AklocTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The broker a fleet publishes into (`akloc-bench --fleet N --broker`): a
/// three-node nats-server cluster (JetStream on, an MQTT listener on each
/// node, on loopback), the default, or one private mosquitto. Both are the
/// integration tests' own (Tests/AklocTestSupport's NATSCluster and
/// MosquittoBroker), so the bench starts and stops a broker exactly as
/// `make test` does; every node is killed by its pid and its folder removed.
final class FleetBroker {
    enum Kind: String, CaseIterable {
        case nats
        case mosquitto
    }

    /// One broker process, for the memory samples and the clean-up check.
    struct Node {
        var name: String
        var pid: pid_t
    }

    let kind: Kind
    private let mosquitto: MosquittoBroker?
    private let cluster: NATSCluster?

    init(_ kind: Kind) throws {
        self.kind = kind
        switch kind {
        case .mosquitto:
            mosquitto = try MosquittoBroker()
            cluster = nil
        case .nats:
            mosquitto = nil
            // NATS's own ack wait (30 s), not the tests' short one: a consumer
            // slowed by a loaded machine should not see redeliveries for it.
            cluster = try NATSCluster(size: 3, ackWait: "30s", readyTimeout: 180)
        }
    }

    /// The processes serving the broker, in node order.
    var nodes: [Node] {
        if let mosquitto { return [Node(name: "mosquitto", pid: mosquitto.process.pid)] }
        guard let cluster else { return [] }
        return zip(cluster.nodes, cluster.processes).compactMap { node, process in
            process.map { Node(name: "nats-server \(node.name)", pid: $0.pid) }
        }
    }

    /// The folders the broker keeps its config and store in.
    var directory: URL {
        mosquitto?.directory ?? cluster?.directory ?? URL(fileURLWithPath: "/nonexistent")
    }

    /// Where the consumer subscribes: mosquitto, or the cluster's second
    /// node (its session and deliveries cross the cluster from the others).
    var consumerPort: UInt16 {
        if let mosquitto { return mosquitto.port }
        return cluster?.mqttPort(1) ?? 0
    }

    /// The `[mqtt] host` line of instance `number`. With a cluster every
    /// instance names all three nodes, starting at node `number % 3`: aklocd
    /// connects to the first node of its list, so identical lists would put
    /// the whole fleet on node 0; a fleet configured like this one spreads
    /// over the cluster as DNS round robin or a shuffled list would.
    func hostLine(_ number: Int) -> String {
        if let mosquitto { return "host = 127.0.0.1\nport = \(mosquitto.port)" }
        guard let cluster else { return "" }
        let count = cluster.nodes.count
        let order = (0..<count).map { cluster.nodes[(number + $0) % count] }
        return "host = " + order.map { "127.0.0.1:\($0.mqttPort)" }.joined(separator: ", ")
    }

    /// What the report says the fleet published into.
    var description: String {
        switch kind {
        case .mosquitto: "one private mosquitto on 127.0.0.1"
        case .nats:
            "a three-node nats-server \(FleetBroker.natsVersion) cluster on 127.0.0.1 (JetStream on, an MQTT "
                + "listener on each node, `ack_wait` 30 s; Tests/AklocTestSupport's NATSCluster, as in "
                + "MQTTNATSClusterTests), every instance with the three nodes in `[mqtt] host`, its list starting "
                + "at node (instance mod 3) so the fleet spreads over the cluster"
        }
    }

    static var natsVersion: String {
        guard let process = try? TestProcess("nats-server", ["--version"]), process.waitForExit(timeout: 10) != nil
        else { return "" }
        return process.stdout().trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "nats-server: ", with: "")
    }

    func stop() {
        mosquitto?.stop()
        cluster?.stop()
    }
}
