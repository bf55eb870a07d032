import AklocCore
import AklocPosix
import Dispatch

/// The daemon's gpsd client: connects through libgps, turns TPVs into
/// `Event`s, and reconnects with backoff whenever gpsd is absent, dies,
/// restarts or sends garbage. It never exits and never crashes the daemon.
///
/// Confinement: a `GPSDSource` belongs to the serial `queue` it is given.
/// Every method must be called on that queue, and every callback (`onEvent`,
/// `log`) runs on it; the libgps fd is an AklocPosix `FileDescriptor` watched
/// through the queue's one epoll instance (`EventPoller`, like every other
/// descriptor of the daemon), timers are `DispatchSourceTimer`s on the same
/// queue, so nothing blocks the
/// loop except `gps_open`'s TCP connect (short on loopback). The type is not
/// Sendable: keep it in the daemon's queue-bound state.
///
/// Wiring, all on the daemon's queue:
///
///     let source = GPSDSource(endpoint: try GPSDEndpoint(parsing: "127.0.0.1:2947"),
///                             device: config.device, queue: queue, log: logger)
///     source.onEvent = { event in perform(engine.handle(event.engineInput, at: SystemClock.monotonicNow())) }
///     source.start()
///     // on the engine's `.watch(on)` output:
///     source.setWatch(on)
public final class GPSDSource {
    public enum Event: Hashable, Sendable {
        /// gpsd answered with its VERSION banner; `name` is e.g. "gpsd://127.0.0.1:2947".
        case connected(name: String)
        /// The connection is gone (or could not be made), reported once per outage.
        case disconnected(reason: String)
        /// A checked fix from the selected device, `receivedAt` set: one per
        /// TPV, so several per epoch (the engine assembles epochs).
        case fix(Location)
        /// A TPV with mode 0/1 from the selected device.
        case noFix(device: String?)
        /// A checked SKY report from the selected device, `receivedAt` set.
        case sky(SkyView)
    }

    public typealias LogLevel = AklocCore.LogLevel

    public struct Status: Hashable, Sendable {
        /// Connected and gpsd's VERSION banner seen.
        public var connected: Bool
        /// The source name, e.g. "gpsd://127.0.0.1:2947".
        public var name: String
        /// Whether a ?WATCH is wanted (sent whenever connected).
        public var watching: Bool
        /// Failed attempts since the last good connection.
        public var reconnectAttempts: Int
        public var lastError: GPSDError?
        /// gpsd's release string from its VERSION banner.
        public var gpsdRelease: String?
    }

    /// How long a connected peer may take to send VERSION before it is
    /// considered not to be gpsd (gpsd sends it at once on accept).
    public let handshakeTimeout: Double
    /// Lines handled per wake-up before yielding the queue to other work.
    static let linesPerWakeup = 256

    public var onEvent: ((Event) -> Void)?
    public private(set) var status: Status

    public let endpoint: GPSDEndpoint
    private let queue: DispatchQueue
    private let log: (LogLevel, String) -> Void
    /// The shell's clock: its time for throttling and receipt, its timers
    /// for the reconnect delay and the handshake deadline.
    private let shellClock: any ShellClock
    private let random: () -> Double

    /// Stopped, connecting, connected or waiting to retry (AklocCore's `Reconnect`).
    private var reconnect: Reconnect
    private var started: Bool { reconnect.state != .stopped }
    private var selector: DeviceSelector
    private var connection: LibGPSConnection?
    /// libgps's socket; closing it closes the libgps connection (`gps_close`).
    private var descriptor: FileDescriptor?
    /// Re-runs the read loop when lines remain buffered after a full batch.
    private var drainSource: DispatchSourceUserDataAdd?
    /// The reconnect delay or the handshake deadline, whichever is pending.
    private var timer: (any ShellTimer)?
    /// Bumped on every connect and teardown, so a callback from an old
    /// connection (or re-entry from `onEvent`) never acts on a newer one.
    private var generation: UInt64 = 0
    /// Each device's latest SKY, by device path ("" for none): a fix takes
    /// its satellites used and HDOP from it (a TPV carries neither).
    private var latestSky: [(device: String, sky: SkyView)] = []

    public init(
        endpoint: GPSDEndpoint = GPSDEndpoint(), device: String? = nil, queue: DispatchQueue,
        log: @escaping (LogLevel, String) -> Void,
        clock: (any ShellClock)? = nil,
        random: @escaping () -> Double = { Double.random(in: 0..<1) },
        backoff: Backoff = Backoff(),
        handshakeTimeout: Double = 5
    ) {
        self.endpoint = endpoint
        self.queue = queue
        self.log = log
        shellClock = clock ?? DispatchClock(queue: queue)
        self.random = random
        self.reconnect = Reconnect(backoff: backoff)
        self.handshakeTimeout = handshakeTimeout
        self.selector = DeviceSelector(pinnedDevice: device)
        self.status = Status(
            connected: false, name: endpoint.sourceName, watching: false, reconnectAttempts: 0,
            lastError: nil, gpsdRelease: nil)
    }

    public convenience init(
        host: String, port: UInt16, device: String?, queue: DispatchQueue,
        log: @escaping (LogLevel, String) -> Void, clock: (any ShellClock)? = nil
    ) {
        self.init(
            endpoint: GPSDEndpoint(host: host, port: port), device: device, queue: queue, log: log, clock: clock)
    }

    deinit {
        descriptor?.close()
        drainSource?.cancel()
        timer?.cancel()
    }

    /// Connects now, and keeps reconnecting until `stop()`.
    public func start() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard reconnect.start(at: clock()) == .connect else { return }
        status.reconnectAttempts = 0
        connect()
    }

    /// Turns the gpsd watch on or off. It is sent at once when connected and
    /// again after every reconnect; while off, gpsd may power the receiver down.
    public func setWatch(_ enabled: Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard status.watching != enabled else { return }
        status.watching = enabled
        selector.reset()
        guard let connection else { return }
        do {
            try connection.stream(watch: enabled)
            log(.info, enabled ? "gpsd watch enabled" : "gpsd watch disabled")
        } catch {
            fail(error)
        }
    }

    /// Closes the connection and stops reconnecting; emits no event.
    public func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard started else { return }
        reconnect.stop()
        tearDown()
        cancelTimer()
        status.connected = false
        log(.info, "gpsd source stopped")
    }

    // MARK: - Connection lifecycle

    private func connect() {
        guard started, connection == nil else { return }
        let opened: LibGPSConnection
        do {
            opened = try LibGPSConnection(endpoint: endpoint)
        } catch {
            fail(error)
            return
        }
        generation &+= 1
        let current = generation
        connection = opened
        log(.debug, "TCP connection to gpsd at \(endpoint) open; waiting for VERSION")

        // The watch ends before the descriptor closes, and libgps closes it.
        let watched = FileDescriptor(adopting: opened.fd) { _ in opened.close() }
        descriptor = watched
        _ = watched.watch(.readable, on: queue) { [weak self] in self?.readLines(generation: current) }
        let drain = DispatchSource.makeUserDataAddSource(queue: queue)
        drain.setEventHandler { [weak self] in self?.readLines(generation: current) }
        drainSource = drain
        drain.resume()

        armTimer(after: handshakeTimeout) { [weak self] in
            guard let self, self.generation == current, !self.status.connected else { return }
            self.fail(
                GPSDError(.handshakeTimeout, "no VERSION from \(self.endpoint) within \(self.handshakeTimeout) s")
            )
        }
        if status.watching {
            do {
                try opened.stream(watch: true)
            } catch {
                fail(error)
            }
        }
    }

    /// Drops the connection, announces the outage once, and schedules a retry.
    private func fail(_ error: GPSDError) {
        let wasConnected = status.connected
        tearDown()
        status.connected = false
        status.lastError = error
        guard case .retry(_, let delay, let firstFailure) = reconnect.failed(at: clock(), unitRandom: random()) else {
            log(.debug, "gpsd source: \(error.message) [\(error.code.rawValue)]")
            return
        }
        status.reconnectAttempts = reconnect.failures
        log(firstFailure ? .warning : .debug, "gpsd source: \(error.message) [\(error.code.rawValue)]")
        if firstFailure {
            onEvent?(.disconnected(reason: wasConnected ? error.message : "gpsd unavailable: \(error.message)"))
        }
        log(
            firstFailure ? .info : .debug,
            "reconnecting to gpsd at \(endpoint) in \(Int((delay * 1000).rounded())) ms (attempt \(status.reconnectAttempts))"
        )
        armRetry(after: delay)
    }

    private func armRetry(after delay: Double) {
        armTimer(after: delay) { [weak self] in
            guard let self else { return }
            self.cancelTimer()
            switch self.reconnect.timerFired(at: self.clock()) {
            case .connect: self.connect()
            case .retry(_, let rest, _): self.armRetry(after: rest)
            case .none: break
            }
        }
    }

    private func tearDown() {
        generation &+= 1
        if let descriptor {
            descriptor.close()  // ends the watch, then closes the libgps connection
        } else {
            connection?.close()
        }
        drainSource?.cancel()
        descriptor = nil
        drainSource = nil
        connection = nil
        cancelTimer()
        selector.reset()
        latestSky = []
    }

    private func armTimer(after seconds: Double, _ handler: @escaping () -> Void) {
        cancelTimer()
        let timer = shellClock.makeTimer(handler)
        timer.schedule(after: seconds, on: shellClock, leeway: 0)
        self.timer = timer
    }

    private func clock() -> Instant { shellClock.now() }
    private func wallClock() -> FixTime { shellClock.wallNow() }

    private func cancelTimer() {
        timer?.cancel()
        timer = nil
    }

    // MARK: - Reading

    private func readLines(generation expected: UInt64) {
        var handled = 0
        while generation == expected, let connection {
            if handled == GPSDSource.linesPerWakeup {
                // Lines may sit in libgps's buffer with nothing left in the
                // kernel, where the read source would not fire again.
                drainSource?.add(data: 1)
                return
            }
            switch connection.read() {
            case .incomplete:
                return
            case .failed(let error):
                fail(error)
                return
            case .line:
                handled += 1
                handleLine(from: connection)
            }
        }
    }

    /// The class akloc reads that `name` (a line's leading class) is, or nil.
    private static func classRead<Name: Collection<UInt8>>(_ name: Name) -> String? {
        if GPSDLine.isClass(name, "TPV") { return "TPV" }
        if GPSDLine.isClass(name, "SKY") { return "SKY" }
        if GPSDLine.isClass(name, "VERSION") { return "VERSION" }
        if GPSDLine.isClass(name, "ERROR") { return "ERROR" }
        if GPSDLine.isClass(name, "WATCH") { return "WATCH" }
        return nil
    }

    /// Only lines of the classes whose content akloc uses (TPV, SKY,
    /// VERSION, ERROR, and WATCH, gpsd's answer to the watch) are checked; libgps parses the others (DEVICE, WATCH,
    /// GST, …) and nothing of them is read, so they are not checked a second
    /// time. The class is compared as bytes:
    /// a String and a Set lookup per line cost 4 % of aklocd's CPU (issue 19).
    private func handleLine(from connection: LibGPSConnection) {
        let verdict: GPSDLine.Verdict? = connection.withLine { line in
            guard let name = GPSDLine.leadingClassBytes(line) else { return GPSDLine.check(line) }
            guard let read = GPSDSource.classRead(name) else { return nil }
            return GPSDLine.check(line, leadingClass: read)
        }
        guard let verdict else { return }
        switch verdict {
        case .invalid(let reason):
            let excerpt = connection.withLine { String(decoding: $0.prefix(80), as: UTF8.self) }
            fail(GPSDError(.protocolError, "bad line from gpsd (\(reason)): \(excerpt.debugDescription)"))
        case .message(className: "VERSION"):
            guard !status.connected else { return }
            handshakeDone(release: connection.versionRelease)
        case .message(className: "TPV"):
            guard status.connected, status.watching else { return }
            handle(tpv: connection.tpv)
        case .message(className: "SKY"):
            guard status.connected, status.watching else { return }
            handle(sky: connection.sky)
        case .message(className: "ERROR"):
            log(.warning, "gpsd reports an error: \(connection.errorMessage)")
        case .message(className: "WATCH"):
            // gpsd's answer to ?WATCH: from here on it sends this client
            // every report (a test starts its replay on this line).
            log(.debug, "gpsd confirmed the watch")
        case .message:
            return
        }
    }

    private func handshakeDone(release: String) {
        cancelTimer()
        _ = reconnect.connected(at: clock())
        status.connected = true
        status.reconnectAttempts = 0
        status.gpsdRelease = release.isEmpty ? nil : release
        log(.info, "connected to gpsd \(release) at \(endpoint)")
        onEvent?(.connected(name: status.name))
    }

    private func handle(tpv report: TPVReport) {
        switch TPVConverter.convert(report, receivedAt: wallClock()) {
        case .fix(var location):
            let key = location.device ?? ""
            if let sky = latestSky.first(where: { $0.device == key })?.sky {
                location.satellitesUsed = sky.used
                location.hdop = sky.dilutions.hdop
            }
            if let passed = selector.offer(location, at: clock()) { onEvent?(.fix(passed)) }
        case .noFix(let device):
            if selector.offerNoFix(device: device, at: clock()) { onEvent?(.noFix(device: device)) }
        case .unusable(let reason):
            log(.debug, "ignoring a TPV: \(reason)")
        }
    }

    private func handle(sky report: SKYReport) {
        let sky = SKYConverter.convert(report, receivedAt: wallClock())
        let key = sky.device ?? ""
        if let index = latestSky.firstIndex(where: { $0.device == key }) {
            latestSky[index].sky = sky
        } else {
            latestSky.append((key, sky))
        }
        if selector.offerSky(device: sky.device) { onEvent?(.sky(sky)) }
    }
}

extension GPSDSource.Event {
    /// The engine input this event stands for (DESIGN §1), so the daemon's
    /// wiring is `engine.handle(event.engineInput, at: now)`.
    public var engineInput: Engine.Input {
        switch self {
        case .connected(let name): return .sourceConnected(name: name)
        case .disconnected: return .sourceDisconnected
        case .fix(let location): return .fix(location)
        case .noFix(let device): return .noFix(device: device)
        case .sky(let sky): return .sky(sky)
        }
    }
}
