import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A private cluster of Debian's `nats-server` for integration tests: every
/// node on loopback with free ports (client, cluster route, monitoring,
/// MQTT), JetStream on, its config and store in a temporary folder. Never the
/// packaged service: each node is stopped by its pid, the folder removed by
/// `stop()`. `kill(_:)` is a SIGKILL (a crashed node); `restart(_:)` brings
/// it back with its store, as a replaced machine would rejoin.
///
/// NATS serves MQTT from JetStream streams (`$MQTT_msgs`, `$MQTT_sess`,
/// `$MQTT_rmsgs`) created on the first MQTT connection. Until they exist and
/// have a leader, a client's CONNECT or PUBLISH waits on JetStream and times
/// out, so `waitUntilReady` checks exactly that instead of sleeping.
public final class NATSCluster: @unchecked Sendable {
    // @unchecked: `processes` is changed only by the test thread that owns the cluster.

    public struct Node: Sendable {
        public var name: String
        public var clientPort: UInt16
        public var routePort: UInt16
        public var monitorPort: UInt16
        public var mqttPort: UInt16
        public var configPath: String
    }

    public let directory: URL
    public let nodes: [Node]
    public private(set) var processes: [TestProcess?]

    /// The streams NATS keeps MQTT sessions, messages and retained messages in.
    public static let mqttStreams = ["$MQTT_msgs", "$MQTT_sess", "$MQTT_rmsgs"]

    public static var available: Bool { access(binary, X_OK) == 0 }

    /// `AKLOC_NATS_SERVER` when set (a nats-server binary), else Debian's.
    public static var binary: String {
        ProcessInfo.processInfo.environment["AKLOC_NATS_SERVER"] ?? TestProcess.which("nats-server")
            ?? "/usr/sbin/nats-server"
    }

    public static var missingMessage: String { "missing nats-server (Debian: apt install nats-server)" }

    /// Starts `size` nodes routed to each other and waits until each serves
    /// MQTT (`waitUntilReady`). `ackWait` is how long NATS waits for a
    /// subscriber's PUBACK before delivering again (its default is 30 s).
    public init(size: Int = 3, ackWait: String = "5s", readyTimeout: Double = 90) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-nats-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var nodes: [Node] = []
        for index in 0..<size {
            nodes.append(
                Node(
                    name: "n\(index)", clientPort: FreePort.loopbackTCP(), routePort: FreePort.loopbackTCP(),
                    monitorPort: FreePort.loopbackTCP(), mqttPort: FreePort.loopbackTCP(),
                    configPath: directory.appendingPathComponent("n\(index).conf").path))
        }
        self.nodes = nodes
        processes = Array(repeating: nil, count: size)
        let routes = nodes.map { "nats-route://127.0.0.1:\($0.routePort)" }.joined(separator: ", ")
        for node in nodes {
            let config = """
                server_name: \(node.name)
                listen: 127.0.0.1:\(node.clientPort)
                http: 127.0.0.1:\(node.monitorPort)
                jetstream { store_dir: "\(directory.path)/\(node.name)-store" }
                cluster { name: akloc-test, listen: 127.0.0.1:\(node.routePort), routes: [\(routes)] }
                mqtt { listen: 127.0.0.1:\(node.mqttPort), ack_wait: "\(ackWait)" }

                """
            try config.write(toFile: node.configPath, atomically: true, encoding: .utf8)
        }
        do {
            for index in nodes.indices { try launch(index) }
            for index in nodes.indices { try waitUntilReady(index, timeout: readyTimeout) }
        } catch {
            // "No suitable peers" on one node says nothing of why: say what
            // each node was doing.
            let nodes = self.nodes.indices.map(nodeState).joined(separator: "\n")
            stop()
            throw SocketClient.Failure("\(error)\nthe nodes:\n\(nodes)")
        }
    }

    deinit { stop() }

    /// `host = ` for aklocd: every node's MQTT listener, in order.
    public var hostList: String {
        nodes.map { "127.0.0.1:\($0.mqttPort)" }.joined(separator: ", ")
    }

    public func mqttPort(_ index: Int) -> UInt16 { nodes[index].mqttPort }

    private func launch(_ index: Int) throws {
        let binary = Self.binary
        processes[index] = try TestProcess(binary, ["-c", nodes[index].configPath])
    }

    /// SIGKILL: the node crashes, its clients see the connection reset.
    public func kill(_ index: Int) {
        processes[index]?.kill()
    }

    /// Starts a killed node again with its store, and waits until it serves
    /// MQTT with every MQTT stream and consumer replica caught up; returns
    /// how many starts that took. nats-server 2.9.10 (bookworm's) sometimes
    /// never catches a rejoined node's consumer replica up ("Expected first
    /// catchup entry to be a snapshot and peerstate, will retry"), leaving
    /// that consumer one failure from losing its quorum, and starting it
    /// again with the same store does not help; as an operator replaces a
    /// broken node, it is then started with an empty store, and JetStream
    /// copies the streams and consumers to it afresh.
    @discardableResult
    public func restart(_ index: Int, timeout: Double = 45, attempts: Int = 3) throws -> Int {
        var failure: Error?
        for attempt in 1...attempts {
            kill(index)
            if attempt > 1 {
                try? FileManager.default.removeItem(
                    at: directory.appendingPathComponent("\(nodes[index].name)-store"))
            }
            try launch(index)
            do {
                try waitUntilReady(index, timeout: timeout)
                return attempt
            } catch {
                failure = error
            }
        }
        throw failure ?? SocketClient.Failure("restart without an attempt")
    }

    public var isRunning: [Bool] { processes.map { $0?.isRunning ?? false } }

    public func stop() {
        for process in processes { process?.kill() }
        processes = processes.map { _ in nil }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The node's MQTT listener accepts a QoS 1 PUBLISH end to end (the
    /// broker answers PUBACK only once JetStream stored it), the node sees a
    /// leader for each MQTT stream, and that leader reports every other
    /// running node as a current replica (a rejoined node has caught up). The probe
    /// connect is what makes NATS create the streams the first time.
    public func waitUntilReady(_ index: Int, timeout: Double = 90) throws {
        let node = nodes[index]
        let deadline = Date().addingTimeInterval(timeout)
        var why = "not listening on \(node.mqttPort)"
        while Date() < deadline {
            guard processes[index]?.isRunning == true else {
                throw SocketClient.Failure("nats-server \(node.name) exited: \(processes[index]?.stderr() ?? "")")
            }
            if !FreePort.isListening(node.mqttPort) {
                usleep(50_000)
                continue
            }
            let probe = try TestProcess(
                "mosquitto_pub",
                [
                    "-h", "127.0.0.1", "-p", String(node.mqttPort), "-q", "1", "-i",
                    "akloc-probe-\(UUID().uuidString.prefix(8))", "-t", "akloc-test/ready/\(node.name)", "-m", "ready",
                ])
            let probed = probe.waitForExit(timeout: 5)
            if probed != 0 {
                probe.kill()
                why = "a QoS 1 probe got no PUBACK: \(probe.stderr())"
                // Each refused probe has the node propose creating the MQTT
                // streams again: a probe every few milliseconds only floods
                // a cluster that is still electing its JetStream leader.
                usleep(200_000)
                continue
            }
            let unready = lagging(Self.mqttStreams, seenBy: index, in: streamClusters)
            // A resumed MQTT session lives in its durable consumers; one
            // whose leader died needs a new leader before it delivers again.
            let consumers = ((try? consumerClusters(index)) ?? [:]).keys.sorted()
            let unreadyConsumers = lagging(consumers, seenBy: index, in: consumerClusters)
            if unready.isEmpty, unreadyConsumers.isEmpty { return }
            why =
                "streams without a leader or with replicas catching up: \(unready); "
                + "consumers likewise: \(unreadyConsumers)"
            usleep(200_000)
        }
        throw SocketClient.Failure(
            "nats-server \(node.name) not ready for MQTT within \(timeout) s: \(why); log: "
                + String((processes[index]?.stderr() ?? "").suffix(2000)))
    }

    /// Each stream's `cluster` object (leader, replicas) as the node reports
    /// it on its monitoring port (`/jsz`).
    public func streamClusters(_ index: Int) throws -> [String: [String: Any]] {
        let jsz = try monitor(index, "/jsz?accounts=true&streams=true")
        var clusters: [String: [String: Any]] = [:]
        for account in jsz["account_details"] as? [[String: Any]] ?? [] {
            for stream in account["stream_detail"] as? [[String: Any]] ?? [] {
                guard let name = stream["name"] as? String else { continue }
                clusters[name] = stream["cluster"] as? [String: Any] ?? [:]
            }
        }
        return clusters
    }

    /// Of `names` (streams, or `stream/consumer`s, as `clusters` reports
    /// them), those without a leader as node `index` sees them, or whose
    /// leader (only it knows whether its followers caught up) lacks a
    /// running replica or has one that is not current.
    private func lagging(
        _ names: [String], seenBy index: Int, in clusters: (Int) throws -> [String: [String: Any]]
    ) -> [String] {
        let seen = (try? clusters(index)) ?? [:]
        let running = Set(nodes.indices.filter { processes[$0]?.isRunning == true }.map { nodes[$0].name })
        return names.filter { name in
            guard let leader = seen[name]?["leader"] as? String, !leader.isEmpty,
                let leaderIndex = nodes.firstIndex(where: { $0.name == leader }),
                let cluster = (try? clusters(leaderIndex))?[name]
            else { return true }
            let all = cluster["replicas"] as? [[String: Any]] ?? []
            let replicas = all.filter { running.contains($0["name"] as? String ?? "") }
            return replicas.count + 1 < min(running.count, all.count + 1)
                || !replicas.allSatisfy { $0["current"] as? Bool == true }
        }
    }

    /// Each consumer of the MQTT streams (`stream/consumer`) with its
    /// `cluster` object (leader, replicas) as the node reports it.
    public func consumerClusters(_ index: Int) throws -> [String: [String: Any]] {
        let jsz = try monitor(index, "/jsz?accounts=true&streams=true&consumers=true")
        var clusters: [String: [String: Any]] = [:]
        for account in jsz["account_details"] as? [[String: Any]] ?? [] {
            for stream in account["stream_detail"] as? [[String: Any]] ?? [] {
                guard let name = stream["name"] as? String, Self.mqttStreams.contains(name) else { continue }
                for consumer in stream["consumer_detail"] as? [[String: Any]] ?? [] {
                    guard let consumerName = consumer["name"] as? String else { continue }
                    clusters["\(name)/\(consumerName)"] = consumer["cluster"] as? [String: Any] ?? [:]
                }
            }
        }
        return clusters
    }

    /// What a failing test prints about the cluster: each running node's
    /// warnings and errors, and the MQTT message stream's consumers as the
    /// node sees them (delivered, pending, leader).
    public func diagnostics() -> String {
        nodes.indices.filter { processes[$0]?.isRunning == true }.map { index in
            let log = (processes[index]?.stderr() ?? "").split(separator: "\n")
                .filter { $0.contains("[WRN]") || $0.contains("[ERR]") }.suffix(15)
            var consumers: [String] = []
            let jsz = try? monitor(index, "/jsz?accounts=true&streams=true&consumers=true")
            for account in jsz?["account_details"] as? [[String: Any]] ?? [] {
                for stream in account["stream_detail"] as? [[String: Any]] ?? [] {
                    let state = stream["state"] as? [String: Any] ?? [:]
                    let leader = (stream["cluster"] as? [String: Any])?["leader"] ?? "?"
                    consumers.append("\(stream["name"] ?? "?") leader \(leader) last_seq \(state["last_seq"] ?? "?")")
                    for consumer in stream["consumer_detail"] as? [[String: Any]] ?? [] {
                        let delivered = (consumer["delivered"] as? [String: Any])?["stream_seq"] ?? "?"
                        let cleader = (consumer["cluster"] as? [String: Any])?["leader"] ?? "?"
                        consumers.append(
                            "  \(consumer["name"] ?? "?") delivered \(delivered) pending \(consumer["num_pending"] ?? "?") "
                                + "ack_pending \(consumer["num_ack_pending"] ?? "?") leader \(cleader)")
                    }
                }
            }
            return "\(nodes[index].name):\n" + (log + consumers.map { Substring($0) }).joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// Whether the node runs, how many routes it has and which JetStream
    /// meta leader it sees, or how it exited.
    func nodeState(_ index: Int) -> String {
        let name = nodes[index].name
        guard processes[index]?.isRunning == true else {
            return "\(name) exited: " + String((processes[index]?.stderr() ?? "").suffix(1000))
        }
        let routes = (try? monitor(index, "/routez"))?["num_routes"] ?? "?"
        let meta = (try? monitor(index, "/jsz"))?["meta_cluster"] as? [String: Any]
        return "\(name) running, routes \(routes), JetStream meta leader \(meta?["leader"] ?? "none"), "
            + "cluster size \(meta?["cluster_size"] ?? "?")"
    }

    /// The node's resident set in KiB (from /proc), nil when it is not running.
    public func residentKiB(_ index: Int) -> Int? {
        guard let pid = processes[index]?.pid, processes[index]?.isRunning == true,
            let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return nil }
        return Int(line.split(separator: " ")[1])
    }

    /// GET `path` on the node's monitoring port, as JSON (HTTP/1.0: the
    /// server closes the connection after the body).
    public func monitor(_ index: Int, _ path: String) throws -> [String: Any] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketClient.Failure("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = nodes[index].monitorPort.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { throw SocketClient.Failure("monitoring port of \(nodes[index].name) refused") }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard write(fd, request, request.count) == request.count else {
            throw SocketClient.Failure("cannot send to the monitoring port")
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { break }
            response += buffer[0..<count]
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let body = text.range(of: "\r\n\r\n").map({ text[$0.upperBound...] }),
            let json = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        else { throw SocketClient.Failure("no JSON from \(nodes[index].name)\(path): \(text.prefix(300))") }
        return json
    }
}
