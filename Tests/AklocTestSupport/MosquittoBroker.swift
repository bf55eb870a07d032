import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A private `mosquitto` broker for integration tests, on a free loopback
/// port, with its config, persistence and (optional) TLS and password files
/// in a temporary folder. Never the system's broker: stopped by pid, the
/// folder removed by `stop()`. `restart()` brings it back on the same port
/// with its persisted sessions, as a broker outage would.
public final class MosquittoBroker: @unchecked Sendable {
    // @unchecked: `process` is replaced only by the test thread that owns the broker.

    public struct Options: Sendable {
        /// Server certificate and key (PEM) for a TLS listener.
        public var tls: (certFile: String, keyFile: String)?
        /// A mosquitto password file; anonymous clients are refused with one.
        public var passwordFile: String?

        public init(tls: (certFile: String, keyFile: String)? = nil, passwordFile: String? = nil) {
            self.tls = tls
            self.passwordFile = passwordFile
        }
    }

    public let port: UInt16
    public let directory: URL
    public private(set) var process: TestProcess
    private let configPath: String

    public static var available: Bool {
        ["mosquitto", "mosquitto_sub", "mosquitto_passwd"].allSatisfy {
            TestProcess.which($0) != nil || access("/usr/sbin/" + $0, X_OK) == 0
        }
    }

    public static var missingMessage: String {
        "missing mosquitto, mosquitto_sub or mosquitto_passwd (Debian: apt install mosquitto mosquitto-clients)"
    }

    public init(options: Options = Options()) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-mosquitto-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = FreePort.loopbackTCP()
        configPath = directory.appendingPathComponent("mosquitto.conf").path
        var lines = [
            "listener \(port) 127.0.0.1",
            // Sessions and queued QoS 1 messages survive `restart()`.
            "persistence true",
            // Started as root, mosquitto would switch to the `mosquitto` user
            // and could then neither save its sessions here nor read the
            // test's key files; as anyone else this line does nothing.
            "user root",
            "persistence_location \(directory.path)/",
            "log_dest stderr",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "max_queued_messages 100000",
        ]
        if let tls = options.tls {
            lines += ["certfile \(tls.certFile)", "keyfile \(tls.keyFile)"]
        }
        if let passwordFile = options.passwordFile {
            lines += ["allow_anonymous false", "password_file \(passwordFile)"]
        } else {
            lines.append("allow_anonymous true")
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: configPath, atomically: true, encoding: .utf8)
        process = try MosquittoBroker.launch(configPath)
        try waitUntilListening()
    }

    deinit { stop() }

    static func launch(_ configPath: String) throws -> TestProcess {
        let binary = TestProcess.which("mosquitto") ?? "/usr/sbin/mosquitto"
        return try TestProcess(binary, ["-c", configPath])
    }

    public func waitUntilListening(timeout: Double = 10) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if FreePort.isListening(port) { return }
            guard process.isRunning else {
                throw SocketClient.Failure("mosquitto exited: \(process.stderr())")
            }
            usleep(10_000)
        }
        throw SocketClient.Failure("mosquitto did not listen on \(port) within \(timeout) s: \(process.stderr())")
    }

    /// SIGTERM (mosquitto saves its sessions) and wait for the exit.
    public func halt() {
        process.signal(SIGTERM)
        if process.waitForExit(timeout: 10) == nil { process.kill() }
    }

    /// Starts it again on the same port with the same config and persistence.
    public func restart() throws {
        halt()
        process = try MosquittoBroker.launch(configPath)
        try waitUntilListening()
    }

    public func stop() {
        process.kill()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// `mosquitto_sub -t '#'` on a broker: every message's retain flag, topic
/// and payload, in arrival order. Its session is persistent (`-c`, QoS 1), so messages
/// published while it reconnects after a broker restart still reach it.
public final class MQTTSubscriber: @unchecked Sendable {
    // @unchecked: only immutable state and a TestProcess.
    public let process: TestProcess

    public struct Message: Sendable {
        public var topic: String
        public var payload: String
        /// Delivered from the broker's retained store (at a SUBSCRIBE,
        /// including the one a reconnecting client sends), not live.
        public var retained = false
        /// When mosquitto_sub received it (Unix seconds), with `timestamps`.
        public var receivedAt: Double?

        /// The payload as a JSON object, or nil.
        public var json: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) as? [String: Any]
        }
    }

    /// `clientID` names the persistent session: a second subscriber with
    /// the same one (on another node of a cluster) resumes it.
    /// With `timestamps`, each message carries when it arrived.
    public init(
        port: UInt16, topic: String = "#", clientID: String? = nil, timestamps: Bool = false,
        extraArguments: [String] = []
    ) throws {
        self.timestamps = timestamps
        process = try TestProcess(
            "mosquitto_sub",
            [
                "-h", "127.0.0.1", "-p", String(port), "-F", timestamps ? "%U " + Self.format : Self.format, "-t",
                topic, "-q", "1", "-c", "-i", clientID ?? "akloc-test-\(UUID().uuidString.prefix(8))",
            ] + extraArguments)
    }

    private let timestamps: Bool

    deinit { process.kill() }

    public func stop() { process.kill() }

    public func messages() -> [Message] {
        guard timestamps else { return Self.parse(process.stdout()) }
        return process.stdout().split(separator: "\n").compactMap { line in
            guard let space = line.firstIndex(of: " "), let time = Double(line[..<space]),
                var message = Self.parse(String(line[line.index(after: space)...])).first
            else { return nil }
            message.receivedAt = time
            return message
        }
    }

    /// Waits (bounded, polling the captured output) until `done` holds for
    /// the messages so far; returns them, or throws on timeout.
    @discardableResult
    public func waitFor(timeout: Double, _ what: String, _ done: ([Message]) -> Bool) throws -> [Message] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let messages = messages()
            if done(messages) { return messages }
            guard Date() < deadline else {
                throw SocketClient.Failure(
                    "timed out after \(timeout) s waiting for \(what); \(messages.count) messages so far; "
                        + "mosquitto_sub stderr: \(process.stderr())")
            }
            guard process.isRunning else {
                throw SocketClient.Failure("mosquitto_sub exited: \(process.stderr())")
            }
            usleep(20_000)
        }
    }

    /// The retained messages on `topic` (a filter), as a consumer that
    /// subscribes now receives them at once: `mosquitto_sub --retained-only`,
    /// which stops at the first fresh message or after `wait` seconds.
    public static func retained(
        host: String = "127.0.0.1", port: UInt16, topic: String, wait: Int = 2
    ) throws -> [Message] {
        let process = try TestProcess(
            "mosquitto_sub",
            [
                "-h", host, "-p", String(port), "-F", format, "-t", topic, "-q", "1", "--retained-only", "-W",
                String(wait),
            ])
        guard process.waitForExit(timeout: Double(wait) + 10) != nil else {
            process.kill()
            throw SocketClient.Failure("mosquitto_sub --retained-only did not exit: \(process.stderr())")
        }
        return parse(process.stdout())
    }

    /// The retain flag (0 or 1), the topic and the payload, one message a line.
    public static let format = "%r %t %p"

    /// `format`'s lines.
    public static func parse(_ output: String) -> [Message] {
        output.split(separator: "\n").compactMap { line -> Message? in
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == "0" || parts[0] == "1" else { return nil }
            return Message(topic: String(parts[1]), payload: String(parts[2]), retained: parts[0] == "1")
        }
    }

    /// Waits until the subscription is live: a retained or fresh message on
    /// `probe` (published by the caller) comes back.
    public func waitUntilSubscribed(port: UInt16, timeout: Double = 10, publishArguments: [String] = []) throws {
        let probe = "akloc-test/probe/\(UUID().uuidString.prefix(8))"
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let publisher = try TestProcess(
                "mosquitto_pub", ["-h", "127.0.0.1", "-p", String(port), "-t", probe, "-m", "ping"] + publishArguments)
            publisher.waitForExit(timeout: 5)
            if (try? waitFor(timeout: 0.5, "the probe", { $0.contains { $0.topic == probe } })) != nil { return }
        }
        throw SocketClient.Failure("mosquitto_sub never saw its probe: \(process.stderr())")
    }
}
