import AklocCore
import AklocPosix
import Dispatch
import Glibc

/// Forwards the fixes the engine hands it (it is one more subscriber, with
/// its own throttle) to an MQTT broker as OwnTracks JSON, losing nothing:
/// each fix is appended to the journal (fsynced) before it is published, and
/// leaves the queue only when the broker acknowledges it. While the broker is
/// unreachable fixes wait, within the limits, and drain in order after a
/// reconnect (docs/mqtt.md).
///
/// Confinement: lives on the daemon's queue like `GPSDSource`; every method
/// must be called there and every callback (`log`) runs there. Not Sendable.
public final class MQTTForwarder {
    public typealias LogLevel = AklocCore.LogLevel

    /// What `akloc status` shows.
    public struct Status: Hashable, Sendable {
        public var connected: Bool
        /// The node in use (connected, being tried, or tried next), as
        /// `mqtt://host:port` or `mqtts://host:port`.
        public var broker: String
        public var topic: String
        public var tid: String
        public var queued: Int
        public var queuedBytes: Int
        /// Seconds since the oldest queued fix was queued; nil when empty.
        public var oldestQueuedAgeSeconds: Double?
        /// Fixes the broker acknowledged.
        public var published: UInt64
        /// Messages in flight when a connection was lost (they are sent again).
        public var failed: UInt64
        /// Fixes sent more than once (after a lost connection or a restart):
        /// the broker may have delivered them twice, as QoS 1 permits.
        public var resent: UInt64
        public var dropped: ForwardQueue.Drops
        public var lastError: MQTTError?
        /// Every node of the broker, in the order they are tried.
        public var nodes: [String] = []
        /// Times the forwarder moved to another node.
        public var switches: UInt64 = 0
        /// The MQTT version of the connection ("5" or "3.1.1"); nil before the first.
        public var protocolVersion: String?
        /// The broker resumed aklocd's MQTT 5 session at the last connection.
        public var sessionPresent = false
    }

    public let settings: MQTTSettings
    public let identity: MQTTSettings.Identity
    let queue: DispatchQueue
    let log: (LogLevel, String) -> Void
    private let random: () -> Double
    private let version: String

    private let journal: QueueJournal
    private var pending: ForwardQueue
    private var client: (any MQTTConnection)?
    /// Makes each connection attempt's client: libmosquitto here, a
    /// scripted broker in the embedded-daemon tests.
    var makeConnection: (MosquittoClient.Options, DispatchQueue, any ShellClock) -> any MQTTConnection = {
        MosquittoClient(options: $0, queue: $1, clock: $2)
    }
    /// Which node, and when (a broker is usually further away and busier
    /// than gpsd: the backoff starts slower and caps at 30 s).
    private var failover: BrokerFailover
    /// The reconnect timer, on the injected clock.
    private var retryTimer: (any ShellTimer)?
    /// `drain-rate`: when the next queued fix may go, and the timer that
    /// resumes publishing then.
    private var pacer: DrainPacer
    private var drainTimer: (any ShellTimer)?
    /// MQTT 5 or 3.1.1, per node (`protocol`).
    private var protocols: MQTTProtocolChoice
    private var protocolInUse: MQTTProtocolChoice.Version?
    private var sessionPresent = false
    private var started: Bool { failover.state != .stopped }
    /// When the last connection was lost, until the next one: the failover
    /// time in the log.
    private var lostAt: Instant?
    private let shellClock: any ShellClock
    private var connectedOnce = false
    /// Seqs published on some connection and not yet acknowledged: sending one
    /// again counts as a possible duplicate.
    private var sentBefore: Set<UInt64> = []
    private var published: UInt64 = 0
    private var failed: UInt64 = 0
    private var resent: UInt64 = 0
    private var lastError: MQTTError?
    private var journalBroken = false
    /// Saved places and region crossings waiting to go out (MQTTForwarder+Places.swift).
    var placeMessages = PlaceMessages()
    var connection: (any MQTTConnection)? { client }
    /// Hears each message on `<topic>/cmd` (subscribed only while
    /// `[mqtt] commands` names any; MQTTForwarder+Commands.swift).
    public var onCommand: (([UInt8]) -> Void)?

    public init(
        settings: MQTTSettings, identity: MQTTSettings.Identity, stateDirectory: String, queue: DispatchQueue,
        version: String, log: @escaping (LogLevel, String) -> Void, clock: any ShellClock,
        random: @escaping () -> Double = { Double.random(in: 0..<1) }
    ) {
        shellClock = clock
        self.settings = settings
        self.identity = identity
        self.queue = queue
        self.version = version
        self.log = log
        self.random = random
        journal = QueueJournal(directory: stateDirectory)
        pending = ForwardQueue(limits: settings.queueLimits)
        failover = BrokerFailover(
            nodeCount: max(1, settings.hosts.count), backoff: Backoff(initial: 0.5, maximum: 30, jitter: 0.25))
        pacer = DrainPacer(rate: settings.drainRate)
        protocols = MQTTProtocolChoice(settings.protocolSetting)
    }

    deinit {
        retryTimer?.cancel()
        drainTimer?.cancel()
    }

    func clock() -> Instant { shellClock.now() }
    func wallClock() -> FixTime { shellClock.wallNow() }

    public var status: Status {
        let nodes = settings.nodes.map { "\(settings.tls ? "mqtts" : "mqtt")://\($0)" }
        return Status(
            connected: client?.isConnected ?? false, broker: nodes[min(failover.node ?? 0, nodes.count - 1)],
            topic: identity.topic, tid: identity.tid, queued: pending.count, queuedBytes: pending.bytes,
            oldestQueuedAgeSeconds: pending.oldest.map {
                max(0, ForwardQueue.seconds(from: $0.queuedAt, to: wallClock()))
            },
            published: published, failed: failed, resent: resent, dropped: pending.drops, lastError: lastError,
            nodes: nodes, switches: failover.switches, protocolVersion: protocolInUse?.rawValue,
            sessionPresent: sessionPresent)
    }

    /// Loads the journal (what a previous run left is published first) and
    /// connects. A journal that cannot be opened is logged and the forwarder
    /// runs from memory: fixes still flow, they just do not survive a restart.
    public func start() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard case .connect(let node) = failover.start(at: clock()) else { return }
        do {
            let loaded = try journal.open()
            for warning in loaded.warnings { log(.warning, "\(journal.path): \(warning)") }
            pending = ForwardQueue(limits: settings.queueLimits, restoring: loaded.entries, nextSeq: loaded.nextSeq)
            // Whatever a previous run left may have reached the broker already.
            sentBefore = Set(loaded.entries.map(\.seq))
            if !loaded.entries.isEmpty {
                log(.notice, "\(loaded.entries.count) queued fix(es) from the last run will be published first")
            }
        } catch {
            journalBroken = true
            log(.error, "store-and-forward journal unavailable, queueing in memory only: \(error)")
        }
        applyDrops(pending.expire(at: wallClock()))
        connect(node)
    }

    /// A fix from the engine: queued durably, then published when possible.
    public func accept(_ location: Location, trigger: OwnTracksPayload.Trigger = .timer) {
        dispatchPrecondition(condition: .onQueue(queue))
        let now = wallClock()
        let payload = OwnTracksPayload.location(location, tid: identity.tid, trigger: trigger, now: now)
        let change = pending.append(payload, at: now)
        if let added = change.added, !journalBroken {
            do {
                try journal.append(added)
            } catch {
                log(.error, "cannot queue a fix on disk (it stays queued in memory): \(error)")
            }
        }
        if let added = change.added {
            // One line per accepted fix, so a test (or an administrator
            // chasing a gap) can check every one arrived.
            log(.debug, "MQTT queued #\(added.seq) \(String(decoding: added.payload, as: UTF8.self))")
        }
        applyDrops(change)
        pump()
    }

    /// A clean stop: the retained status says offline, DISCONNECT keeps the
    /// broker from publishing the will; the queue stays on disk.
    public func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard started else { return }
        failover.stop()
        retryTimer?.schedule(at: nil, leeway: 0)
        drainTimer?.schedule(at: nil, leeway: 0)
        if let client, client.isConnected {
            _ = try? client.publish(statusMessage(online: false))
        }
        client?.disconnect()
        client = nil
    }

    // MARK: - Connection

    private func connect(_ node: Int) {
        guard started else { return }
        retryTimer?.schedule(at: nil, leeway: 0)
        let address = settings.nodes[node]
        var password = settings.password
        if let file = settings.passwordFile {
            do {
                password = try Self.readPassword(file)
            } catch {
                retryLater(error)
                return
            }
        }
        let options = MosquittoClient.Options(
            host: address.host, port: Int32(address.port ?? settings.effectivePort),
            keepalive: Int32(settings.keepalive),
            clientID: identity.clientID, username: settings.username, password: password,
            tls: settings.tls
                ? MosquittoClient.Options.TLS(
                    caFile: settings.caFile, certFile: settings.certFile, keyFile: settings.keyFile) : nil,
            // The retained status says offline when the broker loses us
            // without a DISCONNECT, as a clean stop says it itself.
            will: statusMessage(online: false),
            subscriptions: commandSubscriptions,
            connectTimeout: Double(max(10, min(settings.keepalive, 30))),
            protocolVersion: protocols.version(forNode: node), sessionExpiry: settings.sessionExpiry)
        let client = makeConnection(options, queue, shellClock)
        client.onEvent = { [weak self, weak client] event in
            // Only the current connection's events: message ids restart at 1
            // with every connection.
            guard let self, let client, self.client === client else { return }
            self.clientEvent(event)
        }
        self.client = client
        do {
            try client.connect()
        } catch {
            self.client = nil
            retryLater(error)
        }
    }

    private func clientEvent(_ event: MosquittoClient.Event) {
        switch event {
        case .connected(let resumed):
            failover.connected(at: clock())
            protocolInUse = protocols.version(forNode: failover.node ?? 0)
            sessionPresent = resumed
            lastError = nil
            // How long publishing stopped: what a failover costs (the NATS
            // cluster test reads it from here).
            let gap =
                lostAt.map { " \(Int((clock().seconds(since: $0) * 1000).rounded())) ms after the last loss" } ?? ""
            lostAt = nil
            log(
                connectedOnce ? .info : .notice,
                "connected to \(status.broker) as \(identity.clientID) (MQTT \(protocolInUse?.rawValue ?? "?")"
                    + (resumed ? ", session resumed" : "") + "), publishing to \(identity.topic)"
                    + (pending.count > 0 ? " (\(pending.count) queued)" : "") + gap)
            connectedOnce = true
            if let client { _ = try? client.publish(statusMessage(online: true)) }
            pumpPlaces(reconnected: true)
            pump()
        case .published(let messageID):
            guard let seq = pending.acknowledged(messageID: messageID) else { return }
            published += 1
            sentBefore.remove(seq)
            record { () throws(MQTTError) in try journal.remove([seq]) }
            // Not on every emptying of the queue: in steady state that would
            // be a rewrite and two fsyncs per fix.
            if journal.shouldCompact(liveEntries: pending.count) { compact() }
            pump()
        case .received(let topic, let payload):
            received(topic: topic, payload: payload)
        case .disconnected(let error):
            if error.code == .unsupportedProtocol, !failover.isConnected, let node = failover.node,
                protocols.unsupported(node: node)
            {
                // Not a failure of the node: it speaks the older version.
                log(.notice, "\(status.nodes[node]) does not speak MQTT 5; using MQTT 3.1.1 with it")
                client = nil
                connect(node)
                return
            }
            if failover.isConnected { lostAt = clock() }
            client = nil
            failed += UInt64(pending.connectionLost())
            retryLater(error)
        }
    }

    private func retryLater(_ error: MQTTError) {
        lastError = error
        let first = failover.failures == 0
        switch failover.failed(at: clock(), unitRandom: random()) {
        case .connect(let node):
            log(
                first ? .warning : .info,
                "MQTT: \(error); trying \(status.nodes[node]) (\(pending.count) queued)")
            connect(node)
        case .retry(_, let delay):
            log(
                first ? .warning : .debug,
                "MQTT: \(error); retrying in \(Int((delay * 1000).rounded())) ms (\(pending.count) queued)")
            armRetry(after: delay)
        case .none:
            break
        }
    }

    private func armRetry(after delay: Double) {
        if retryTimer == nil {
            retryTimer = shellClock.makeTimer { [weak self] in self?.retryFired() }
        }
        retryTimer?.schedule(after: delay, on: shellClock, leeway: 0)
    }

    private func retryFired() {
        switch failover.timerFired(at: clock()) {
        case .connect(let node):
            applyDrops(pending.expire(at: wallClock()))
            connect(node)
        case .retry(_, let rest):
            armRetry(after: rest)
        case .none:
            break
        }
    }

    /// Publishes queued fixes, oldest first, as far as the window and the
    /// drain rate allow.
    private func pump() {
        guard let client, client.isConnected else { return }
        while let entry = pending.nextToPublish() {
            if case .wait(_, let delay) = pacer.decide(at: clock()) {
                if drainTimer == nil {
                    drainTimer = shellClock.makeTimer { [weak self] in self?.pump() }
                }
                drainTimer?.schedule(after: delay, on: shellClock, leeway: 0)
                return
            }
            let messageID: Int32
            do {
                messageID = try client.publish(
                    MosquittoClient.Message(
                        topic: identity.topic, payload: entry.payload, qos: Int32(settings.qos),
                        retain: settings.retain, expiry: expiry(of: entry)))
            } catch {
                log(.warning, "MQTT: \(error)")
                lastError = error
                return
            }
            pending.sent(entry.seq, messageID: messageID)
            pacer.sent(at: clock())
            if !sentBefore.insert(entry.seq).inserted { resent += 1 }
            // The client may have failed inside publish and called back.
            guard self.client === client, client.isConnected else { return }
        }
    }

    /// What is left of `expire` for a queued fix, in whole seconds (at
    /// least 1: 0 would mean "never" to the broker); nil without `expire`.
    private func expiry(of entry: ForwardQueue.Entry) -> UInt32? {
        guard let expire = settings.expire else { return nil }
        let left = expire - ForwardQueue.seconds(from: entry.queuedAt, to: wallClock())
        return UInt32(max(1, min(Double(UInt32.max - 1), left.rounded(.up))))
    }

    private func statusMessage(online: Bool) -> MosquittoClient.Message {
        MosquittoClient.Message(
            topic: identity.topic + "/akloc/status",
            payload: OwnTracksPayload.status(online: online, tid: identity.tid, version: version, at: wallClock()),
            qos: Int32(settings.qos), retain: true)
    }

    // MARK: - Queue bookkeeping

    private func applyDrops(_ change: ForwardQueue.Change) {
        guard !change.dropped.isEmpty else { return }
        for reason in ForwardQueue.DropReason.allCases {
            let seqs = change.dropped.filter { $0.reason == reason }.map(\.seq)
            guard !seqs.isEmpty else { continue }
            for seq in seqs { sentBefore.remove(seq) }
            record { () throws(MQTTError) in try journal.remove(seqs, reason: reason) }
            log(
                .warning,
                "MQTT queue: dropped \(seqs.count) unpublished fix(es), oldest first (\(reason.rawValue) limit); "
                    + "\(pending.drops.total) dropped since start")
        }
    }

    private func compact() {
        record { () throws(MQTTError) in try journal.compact(pending.entries, nextSeq: pending.nextSeq) }
    }

    private func record(_ body: () throws(MQTTError) -> Void) {
        guard !journalBroken else { return }
        do {
            try body()
        } catch {
            log(.error, "store-and-forward journal: \(error)")
        }
    }

    /// A NUL-terminated C buffer as UTF-8 text.
    static func string(_ buffer: [CChar]) -> String {
        let bytes = buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The first line of `path` (a password file holds nothing else).
    static func readPassword(_ path: String) throws(MQTTError) -> String {
        let bytes: [UInt8]
        do {
            bytes = try FileReader.read(path, limit: 4096)
        } catch {
            throw MQTTError(.passwordFileUnreadable, "cannot read \(path): \(error)")
        }
        let line = bytes.prefix { $0 != 0x0A && $0 != 0x0D }
        guard !line.isEmpty else { throw MQTTError(.passwordFileUnreadable, "\(path) is empty") }
        return String(decoding: line, as: UTF8.self)
    }
}

extension MQTTSettings {
    /// The OwnTracks names on this host: the user aklocd runs as, and the
    /// host name.
    public func identityOnThisHost() -> Identity {
        var user = "akloc"
        if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { user = String(cString: name) }
        var buffer = [CChar](repeating: 0, count: 256)
        let host = gethostname(&buffer, buffer.count - 1) == 0 ? MQTTForwarder.string(buffer) : "aklocd"
        return identity(hostUser: user, hostName: host.split(separator: ".").first.map(String.init) ?? host)
    }
}
