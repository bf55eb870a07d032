import AklocCore
import AklocPosix
import CMosquitto
import Dispatch
import Glibc

/// One MQTT connection through libmosquitto, driven by the daemon's event
/// loop instead of libmosquitto's own thread (`mosquitto_loop_start` would be
/// a second loop racing the first): a read source on the socket calls
/// `mosquitto_loop_read`, a write source that exists only while
/// `mosquitto_want_write` calls `mosquitto_loop_write`, and a timer calls
/// `mosquitto_loop_misc` for keepalive. libmosquitto's callbacks run inside
/// those calls, on the same queue, and reach this object through the
/// userdata pointer.
///
/// Each connection attempt gets a fresh `struct mosquitto`, destroyed when
/// the connection ends: libmosquitto would otherwise resend its own copy of
/// unacknowledged messages on reconnect, beside the forwarder's replay.
/// Reconnecting is the owner's decision (`MQTTForwarder`, with backoff).
///
/// `mosquitto_connect_async` resolves the host name with the blocking
/// getaddrinfo, so it runs on a worker thread: a DNS lookup that hangs
/// delays this attempt (until the connect timeout ends it), never the loop.
///
/// Confinement: every method must be called on `queue`, and every callback
/// runs on it. Not Sendable.
/// One MQTT connection as the forwarder drives it.
protocol MQTTConnection: AnyObject {
    var onEvent: ((MosquittoClient.Event) -> Void)? { get set }
    var isConnected: Bool { get }
    /// Starts an attempt; `.connected` or `.disconnected` follows.
    func connect() throws(MQTTError)
    /// Queues a message; returns its message id.
    func publish(_ message: MosquittoClient.Message) throws(MQTTError) -> Int32
    func disconnect()
}

/// libmosquitto's functions. Used only where a `struct mosquitto` exists,
/// which `connect()` makes only after the library loaded.
private var api: akloc_mosquitto_api { akloc_mosquitto_load(nil)!.pointee }

final class MosquittoClient: MQTTConnection {
    enum Event {
        /// CONNACK accepted; `sessionPresent`: the broker kept this client
        /// id's session (MQTT 5, clean start off) and resumed it.
        case connected(sessionPresent: Bool)
        /// The attempt failed or the connection ended; the client is idle again.
        case disconnected(MQTTError)
        /// The broker acknowledged a QoS 1 message (PUBACK), or a QoS 0
        /// message was written to the socket.
        case published(messageID: Int32)
        /// A message on one of `Options.subscriptions`: at most its first
        /// `maxReceivedBytes` + 1 bytes (enough to tell it is too long).
        case received(topic: String, payload: [UInt8])
    }

    /// What a received message may bring into aklocd's memory: the
    /// command parser's limit and one byte to see it passed.
    static let maxReceivedBytes = OwnTracksCommand.maxPayloadBytes

    struct Options {
        var host: String
        var port: Int32
        var keepalive: Int32
        var clientID: String
        var username: String?
        var password: String?
        var tls: TLS?
        var will: Message?
        /// Topics subscribed to (QoS 1) on every connection.
        var subscriptions: [String] = []
        /// Seconds for TCP, TLS and CONNACK together.
        var connectTimeout: Double
        /// With MQTT 5 the session is kept (clean start off) for
        /// `sessionExpiry` seconds after the connection ends; 3.1.1
        /// sessions are clean.
        var protocolVersion: MQTTProtocolChoice.Version = .v311
        var sessionExpiry: UInt32 = 0

        struct TLS {
            var caFile: String?
            var certFile: String?
            var keyFile: String?
        }
    }

    struct Message {
        var topic: String
        var payload: [UInt8]
        var qos: Int32
        var retain: Bool
        /// MQTT 5's message expiry interval: the broker drops the message
        /// from queues it still waits in after that many seconds.
        var expiry: UInt32?
    }

    var onEvent: ((Event) -> Void)?
    private(set) var isConnected = false
    var isIdle: Bool { mosq == nil }

    private let options: Options
    private let queue: DispatchQueue
    private var mosq: OpaquePointer?
    /// A duplicate of libmosquitto's socket for the dispatch sources to
    /// watch: libmosquitto closes its own descriptor whenever it decides the
    /// connection is over, possibly while a source is still registered on
    /// it; the duplicate closes only once every source on it is cancelled.
    private var socket: FileDescriptor?
    private var readSource: FileDescriptor.Watch?
    private var writeSource: FileDescriptor.Watch?
    /// libmosquitto's once-a-second keepalive and the CONNACK deadline,
    /// on the shell's clock.
    private let clock: any ShellClock
    private var timer: (any ShellTimer)?
    private var connectDeadline: Instant?
    /// The failure seen inside a libmosquitto call, reported once the call returns.
    private var pendingFailure: MQTTError?
    /// The attempt whose `mosquitto_connect_async` runs on a worker thread;
    /// while it is set, only that thread touches `mosq`.
    private var resolving: Resolution?
    /// Inside `mosquitto_publish`.
    private var publishing = false
    /// Acknowledgements that came inside `mosquitto_publish`, and the source
    /// that reports them once it returned.
    private var deferredPublished: [Int32] = []
    private var deferredSource: DispatchSourceUserDataAdd?

    init(options: Options, queue: DispatchQueue, clock: any ShellClock) {
        self.options = options
        self.queue = queue
        self.clock = clock
    }

    deinit {
        // Sources are cancelled without their handlers touching `self`.
        socket?.close()
        timer?.cancel()
        deferredSource?.cancel()
        if let resolving {
            resolving.abandoned = true
        } else if let mosq {
            api.destroy(mosq)
        }
    }

    /// Starts a connection attempt; `.connected` or `.disconnected` follows.
    func connect() throws(MQTTError) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard mosq == nil else { return }
        var reason: UnsafePointer<CChar>?
        guard akloc_mosquitto_load(&reason) != nil else {
            let why = reason.map { String(cString: $0) } ?? "unknown error"
            throw MQTTError(.setupFailed, "cannot load libmosquitto (\(AKLOC_MOSQUITTO_LIBRARY)): \(why)")
        }
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        let clean = options.protocolVersion == .v311
        guard let handle = api.new_(options.clientID, clean, userdata) else {
            throw MQTTError(.setupFailed, "mosquitto_new failed: \(Errno.current)")
        }
        mosq = handle
        do {
            try configure(handle)
        } catch {
            release()
            throw error
        }
        connectDeadline = clock.now().advanced(bySeconds: options.connectTimeout)
        let tick = clock.makeTimer { [weak self] in self?.tick() }
        tick.schedule(after: 1, on: clock, leeway: 0.1)
        timer = tick
        let resolution = Resolution(handle: handle)
        resolving = resolution
        let (host, port, keepalive) = (options.host, options.port, options.keepalive)
        let sessionExpiry = options.protocolVersion == .v5 ? options.sessionExpiry : nil
        let client = Resolution.Weak(self)
        let queue = self.queue
        Self.connectWork { [resolution] in
            // getaddrinfo, then a non-blocking connect; errno belongs to this
            // thread. libmosquitto 2.0 has no asynchronous connect that takes
            // CONNECT properties: with MQTT 5 the blocking one runs here, on
            // the worker (it leaves the socket non-blocking once connected).
            let rc: Int32
            if let sessionExpiry {
                var properties: OpaquePointer?
                let property = Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue)
                _ = api.property_add_int32(&properties, property, sessionExpiry)
                rc = api.connect_bind_v5(resolution.handle, host, port, keepalive, nil, properties)
                api.property_free_all(&properties)
            } else {
                rc = api.connect_async(resolution.handle, host, port, keepalive)
            }
            let failure = rc == MOSQ_ERR_SUCCESS.rawValue ? nil : Self.describe(rc)
            queue.async {
                guard !resolution.abandoned, let self = client.value else {
                    api.destroy(resolution.handle)
                    return
                }
                self.resolved(failure)
            }
        }
    }

    /// Runs each attempt's blocking connect on a thread of its own (a hung
    /// lookup keeps its thread; the next attempt, to another node, gets
    /// another). A test hook at the edge may replace it.
    nonisolated(unsafe) static var connectWork: (@escaping @Sendable () -> Void) -> Void = { work in
        DispatchQueue.global(qos: .utility).async(execute: work)
    }

    /// Back from the worker: watch the socket, or report why there is none.
    private func resolved(_ failure: String?) {
        resolving = nil
        guard let handle = mosq else { return }
        if let failure {
            fail(MQTTError(.connectFailed, "cannot connect to \(options.host):\(options.port): \(failure)"))
            return
        }
        let fd = api.socket(handle)
        guard fd >= 0, let watched = try? FileDescriptor.duplicate(fd) else {
            fail(MQTTError(.connectFailed, "no socket for \(options.host):\(options.port)"))
            return
        }
        socket = watched
        readSource = watched.watch(.readable, on: queue) { [weak self] in self?.readable() }
        let deferred = DispatchSource.makeUserDataAddSource(queue: queue)
        deferred.setEventHandler { [weak self] in self?.reportDeferred() }
        deferredSource = deferred
        deferred.resume()
        updateWriteInterest()
    }

    /// Queues a message; returns its message id. Only while connected.
    func publish(_ message: Message) throws(MQTTError) -> Int32 {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let mosq, isConnected else { throw MQTTError(.publishFailed, "not connected") }
        var mid: Int32 = 0
        publishing = true
        defer { publishing = false }
        var properties: OpaquePointer?
        defer { api.property_free_all(&properties) }
        if options.protocolVersion == .v5, let expiry = message.expiry {
            _ = api.property_add_int32(&properties, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), expiry)
        }
        let rc = message.payload.withUnsafeBytes { bytes in
            options.protocolVersion == .v5
                ? api.publish_v5(
                    mosq, &mid, message.topic, Int32(bytes.count), bytes.baseAddress, message.qos, message.retain,
                    properties)
                : api.publish(
                    mosq, &mid, message.topic, Int32(bytes.count), bytes.baseAddress, message.qos, message.retain)
        }
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTError(.publishFailed, "mosquitto_publish to \(message.topic): \(Self.describe(rc))")
        }
        // mosquitto_publish tries one write itself; whatever is left waits
        // for the socket to become writable.
        updateWriteInterest()
        return mid
    }

    /// Sends DISCONNECT (so the broker does not publish the will) with
    /// whatever is queued before it, as far as the socket takes it now,
    /// then closes. Emits no event.
    func disconnect() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let mosq else { return }
        if isConnected {
            _ = api.disconnect(mosq)
            _ = api.loop_write(mosq, 16)
        }
        release()
    }

    // MARK: - libmosquitto callbacks (inside loop_read/write/misc, on `queue`)

    fileprivate func connectCallback(_ rc: Int32, flags: Int32) {
        // 3.1.1's "unacceptable protocol version" is 1; MQTT 5's 0x84, which
        // libmosquitto also reports when a 3.1.1 broker answers a 5 CONNECT.
        let unsupported =
            rc == Int32(MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION.rawValue)
            || (rc == 1 && options.protocolVersion == .v311)
        guard rc == 0 else {
            // MQTT 5 reason codes have names of their own.
            let reason = options.protocolVersion == .v5 ? api.reason_string(rc) : api.connack_string(rc)
            pendingFailure = MQTTError(
                unsupported ? .unsupportedProtocol : .connectionRefused,
                "\(options.host):\(options.port) refused the connection: \(reason.map { String(cString: $0) } ?? "code \(rc)")"
            )
            return
        }
        isConnected = true
        connectDeadline = nil
        if let mosq {
            for topic in options.subscriptions {
                let rc = api.subscribe(mosq, nil, topic, 1)
                guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                    pendingFailure = MQTTError(.setupFailed, "cannot subscribe to \(topic): \(Self.describe(rc))")
                    return
                }
            }
        }
        onEvent?(.connected(sessionPresent: flags & 1 != 0))
    }

    fileprivate func disconnectCallback(_ rc: Int32) {
        if pendingFailure == nil {
            pendingFailure = MQTTError(
                .connectionLost, "connection to \(options.host):\(options.port) lost: \(Self.describe(rc))")
        }
    }

    fileprivate func publishCallback(_ mid: Int32) {
        guard publishing else {
            onEvent?(.published(messageID: mid))
            return
        }
        // A QoS 0 message can be written, and reported, inside
        // mosquitto_publish, before the caller knows its message id: report
        // it on the next turn of the loop (dropped if the connection ends first).
        deferredPublished.append(mid)
        deferredSource?.add(data: 1)
    }

    fileprivate func messageCallback(_ message: UnsafePointer<mosquitto_message>) {
        let message = message.pointee
        guard let topic = message.topic.map({ String(cString: $0) }) else { return }
        let length = Int(max(0, message.payloadlen))
        var payload: [UInt8] = []
        if let bytes = message.payload, length > 0 {
            let kept = min(length, Self.maxReceivedBytes + 1)
            payload = Array(UnsafeRawBufferPointer(start: bytes, count: kept))
        }
        onEvent?(.received(topic: topic, payload: payload))
    }

    private func reportDeferred() {
        let mids = deferredPublished
        deferredPublished.removeAll()
        for mid in mids where mosq != nil { onEvent?(.published(messageID: mid)) }
    }

    // MARK: - Driving the loop

    private func readable() {
        guard let mosq else { return }
        let rc = api.loop_read(mosq, 64)
        finish(rc, "read")
    }

    private func writable() {
        guard let mosq else { return }
        var rc = api.loop_write(mosq, 64)
        // While a TLS handshake is pending, libmosquitto only advances it
        // from loop_read; a handshake step may be waiting for writability.
        if rc == MOSQ_ERR_SUCCESS.rawValue, options.tls != nil, !isConnected { rc = api.loop_read(mosq, 1) }
        finish(rc, "write")
    }

    private func tick() {
        guard let mosq else { return }
        timer?.schedule(after: 1, on: clock, leeway: 0.1)
        if let connectDeadline, clock.now() > connectDeadline {
            let what =
                resolving != nil
                ? "no address for \(options.host) (name lookup)" : "no CONNACK from \(options.host):\(options.port)"
            fail(MQTTError(.connectFailed, "\(what) within \(Int(options.connectTimeout)) s"))
            return
        }
        guard resolving == nil else { return }
        finish(api.loop_misc(mosq), "keepalive")
    }

    /// After a loop call: a failure (from its return code or a callback)
    /// ends the connection; otherwise the write interest follows libmosquitto.
    private func finish(_ rc: Int32, _ what: String) {
        if let failure = pendingFailure {
            fail(failure)
        } else if rc != MOSQ_ERR_SUCCESS.rawValue, rc != MOSQ_ERR_CONN_PENDING.rawValue {
            fail(
                MQTTError(
                    isConnected ? .connectionLost : .connectFailed,
                    "\(options.host):\(options.port) (\(what)): \(Self.describe(rc))"))
        } else {
            updateWriteInterest()
        }
    }

    private func fail(_ error: MQTTError) {
        release()
        onEvent?(.disconnected(error))
    }

    private func updateWriteInterest() {
        guard let mosq, let socket else { return }
        let wanted = api.want_write(mosq)
        if wanted, writeSource == nil {
            writeSource = socket.watch(.writable, on: queue) { [weak self] in self?.writable() }
        } else if !wanted, let writeSource {
            writeSource.cancel()
            self.writeSource = nil
        }
    }

    /// Cancels the sources (the duplicated fd closes once both cancel
    /// handlers ran) and destroys the libmosquitto handle.
    private func release() {
        socket?.close()
        timer?.cancel()
        deferredSource?.cancel()
        readSource = nil
        writeSource = nil
        timer = nil
        deferredSource = nil
        deferredPublished.removeAll()
        socket = nil
        connectDeadline = nil
        pendingFailure = nil
        isConnected = false
        if let resolving {
            // The worker still uses the handle: it destroys it when done.
            resolving.abandoned = true
            self.resolving = nil
        } else if let mosq {
            api.destroy(mosq)
        }
        mosq = nil
    }

    private func configure(_ handle: OpaquePointer) throws(MQTTError) {
        api.connect_with_flags_callback_set(handle) { _, userdata, rc, flags in
            guard let userdata else { return }
            Unmanaged<MosquittoClient>.fromOpaque(userdata).takeUnretainedValue().connectCallback(rc, flags: flags)
        }
        api.disconnect_callback_set(handle) { _, userdata, rc in
            guard let userdata else { return }
            Unmanaged<MosquittoClient>.fromOpaque(userdata).takeUnretainedValue().disconnectCallback(rc)
        }
        api.publish_callback_set(handle) { _, userdata, mid in
            guard let userdata else { return }
            Unmanaged<MosquittoClient>.fromOpaque(userdata).takeUnretainedValue().publishCallback(mid)
        }
        api.message_callback_set(handle) { _, userdata, message in
            guard let userdata, let message else { return }
            Unmanaged<MosquittoClient>.fromOpaque(userdata).takeUnretainedValue().messageCallback(message)
        }
        // MQTT 3.1.1 is what OwnTracks Recorder, Home Assistant and every
        // broker speak; 5 adds session and message expiry.
        let version = options.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try check(api.int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, version), "protocol version")
        if let username = options.username {
            try check(api.username_pw_set(handle, username, options.password), "username/password")
        }
        if let tls = options.tls {
            // Without a CA file, the system's trust store: libmosquitto needs
            // a CA file or directory to turn TLS on at all.
            let caPath = tls.caFile == nil ? Self.systemCertificateDirectory : nil
            try check(api.tls_set(handle, tls.caFile, caPath, tls.certFile, tls.keyFile, nil), "TLS files")
        }
        if let will = options.will {
            let rc = will.payload.withUnsafeBytes { bytes in
                api.will_set(handle, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos, will.retain)
            }
            try check(rc, "last will")
        }
    }

    private func check(_ rc: Int32, _ what: String) throws(MQTTError) {
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTError(.setupFailed, "libmosquitto refused the \(what): \(Self.describe(rc))")
        }
    }

    /// Debian's hashed directory of trusted CA certificates (ca-certificates).
    static let systemCertificateDirectory = "/etc/ssl/certs"

    static func describe(_ rc: Int32) -> String {
        if rc == MOSQ_ERR_ERRNO.rawValue { return Errno.current.description }
        return api.strerror_(rc).map { String(cString: $0) } ?? "error \(rc)"
    }
}

/// One `mosquitto_connect_async` handed to a worker thread. `abandoned`
/// is read and written only on the client's queue.
private final class Resolution: @unchecked Sendable {
    let handle: OpaquePointer
    var abandoned = false

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    /// The client, reached back on its queue only.
    struct Weak: @unchecked Sendable {
        weak var value: MosquittoClient?

        init(_ value: MosquittoClient) {
            self.value = value
        }
    }
}
