import AklocCore
import AklocFeature
import AklocGPSD
import AklocMQTT
import AklocPosix
import AklocSystemd
import AklocTestSupport
import Foundation

@testable import AklocDaemon

#if canImport(Glibc)
    import Glibc
#endif

// The whole daemon on virtual time, with no sockets and no gpsd (swift-nio's
// EmbeddedEventLoop idea): a clock the test advances, timers that fire as it
// passes their deadlines, clients on in-memory pipes, and a fix source the
// test drives. Everything runs on the daemon's queue, inside `queue.sync`,
// so each step is deterministic. The test doubles are `@unchecked Sendable`
// for that reason: only the daemon's queue touches them, while the test
// thread waits in `sync`.

/// A client's end of an in-memory pipe. The daemon writes into a buffer of
/// `capacity` bytes (the socket buffer) and sees "would block" once it is
/// full; the test reads from it, which makes room and wakes the daemon.
final class MemoryTransport: StreamTransport, @unchecked Sendable {
    var capacity: Int
    /// Daemon to client, not read by the test yet.
    private(set) var unread: [UInt8] = []
    /// Client to daemon, not read by the daemon yet.
    private var inbound: [UInt8] = []
    private var peerClosed = false
    private var readWatch: Watch?
    private var writeWatch: Watch?
    private(set) var isClosing = false

    init(capacity: Int = 1 << 20) {
        self.capacity = capacity
    }

    /// A handler the pipe calls while it is neither suspended nor cancelled.
    final class Watch: StreamWatch {
        let handler: () -> Void
        var isSuspended = false
        var isCancelled = false

        init(_ handler: @escaping () -> Void) { self.handler = handler }

        var isActive: Bool { !isSuspended && !isCancelled }
        func suspend() { isSuspended = true }
        func resume() { isSuspended = false }
        func cancel() { isCancelled = true }

        func fire() { if isActive { handler() } }
    }

    // MARK: The daemon's side

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> UnixStreamSocket.Received {
        if inbound.isEmpty { return peerClosed ? .endOfFile : .wouldBlock }
        let count = min(buffer.count, inbound.count)
        buffer.copyBytes(from: inbound[0..<count])
        inbound.removeFirst(count)
        return .bytes(count)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(SocketError) -> Int {
        if peerClosed { throw SocketError(.write, path: nil, errno: EPIPE) }
        let count = min(bytes.count, max(0, capacity - unread.count))
        unread.append(contentsOf: bytes.prefix(count))
        return count
    }

    func watch(_ event: FileDescriptor.Event, on queue: DispatchQueue, handler: @escaping () -> Void)
        -> any StreamWatch
    {
        let watch = Watch(handler)
        switch event {
        case .readable: readWatch = watch
        case .writable: writeWatch = watch
        }
        return watch
    }

    func close(then: (() -> Void)?) {
        isClosing = true
        readWatch?.cancel()
        writeWatch?.cancel()
        readWatch = nil
        writeWatch = nil
        then?()
    }

    var isWaitingForWritable: Bool { writeWatch?.isActive ?? false }
    var isClosed: Bool { isClosing }

    // MARK: The test's side (on the daemon's queue)

    /// Sends one request line, as a client would.
    func send(_ line: String) {
        inbound.append(contentsOf: Array(line.utf8) + [0x0A])
        readWatch?.fire()
    }

    /// The client hangs up.
    func hangUp() {
        peerClosed = true
        readWatch?.fire()
    }

    /// Bytes read by the test, not yet a whole line.
    private var partial: [UInt8] = []

    /// Reads until the daemon has nothing more to write, making room in the
    /// buffer (and waking the daemon's writer, as the kernel would); returns
    /// every complete message.
    func receive() -> [[String: Any]] {
        repeat {
            partial += unread
            unread.removeAll()
            writeWatch?.fire()
        } while !unread.isEmpty
        guard let end = partial.lastIndex(of: 0x0A) else { return [] }
        let lines = partial[...end].split(separator: 0x0A)
        partial.removeFirst(end + 1)
        return lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any] }
    }
}

/// A fix source the test drives: it says up, down, and hands in fixes.
final class ManualSource: FixSource, @unchecked Sendable {
    let name = "manual source"
    let sourceName = "manual://test"
    var onEvent: ((GPSDSource.Event) -> Void)?
    private(set) var watching = false
    private(set) var running = false

    func start() throws(ComponentError) { running = true }
    func stop() { running = false }
    func setWatch(_ enabled: Bool) { watching = enabled }

    func emit(_ event: GPSDSource.Event) {
        precondition(running, "a stopped source sends nothing")
        onEvent?(event)
    }
}

/// A `Daemon` built as `DaemonMain` builds it, on a manual clock, with no
/// listener, no gpsd and no state directory.
final class EmbeddedDaemon: @unchecked Sendable {
    let daemon: Daemon
    let clock = ManualClock()
    let source = ManualSource()
    let sessions = FakeSessionMonitor()

    init(
        configuration: Configuration = Configuration(),
        stateDirectory: String? = nil,
        makeForwarder: (
            @Sendable (MQTTSettings, MQTTSettings.Identity, DispatchQueue, ManualClock) -> any LocationForwarder
        )? = nil
    ) throws {
        let clock = clock
        let source = source
        var environment = DaemonEnvironment()
        environment.makeClock = { _ in clock }
        environment.listening = ClientServer.Listening.none
        environment.makeSource = { _, _ in source }
        if let makeForwarder {
            // The MQTT feature with the test's forwarder, in its place in the list.
            let scripted = FeaturePlug(section: "mqtt", { $0.mqtt }) { settings, host in
                settings.enabled
                    ? MQTTFeature(
                        settings: settings, host: host,
                        forwarder: makeForwarder(settings, settings.identityOnThisHost(), host.queue, clock))
                    : nil
            }
            environment.features = environment.features.map { $0.section == "mqtt" ? scripted : $0 }
        }
        let engine = try Engine(
            configuration: Daemon.engineConfiguration(configuration), restoring: PersistentState())
        daemon = Daemon(
            options: DaemonOptions(), configuration: configuration, configPath: nil, engine: engine,
            stateStore: stateDirectory.map { StateStore(directory: $0) },
            sessions: sessions, logger: Logger(minimumLevel: .error), environment: environment)
        try onQueue { daemon throws(ComponentError) in try daemon.start(activatedFD: nil, handlingSignals: false) }
    }

    /// Runs `body` on the daemon's queue, inside the actor.
    func onQueue<T: Sendable, E: Error>(_ body: @Sendable (isolated Daemon) throws(E) -> T) throws(E) -> T {
        let daemon = daemon
        let result: Result<T, E> = daemon.queue.sync {
            daemon.assumeIsolated { daemon in
                do throws(E) { return .success(try body(daemon)) } catch { return .failure(error) }
            }
        }
        return try result.get()
    }

    func onQueue<T: Sendable>(_ body: @Sendable (isolated Daemon) -> T) -> T {
        let daemon = daemon
        return daemon.queue.sync { daemon.assumeIsolated { body($0) } }
    }

    /// A client connected as `uid`, its pipe holding `capacity` bytes.
    func connect(uid: UInt32 = 0, capacity: Int = 1 << 20) -> MemoryTransport {
        let transport = MemoryTransport(capacity: capacity)
        onQueue { daemon in
            daemon.server.accept(
                BufferedStream(transport),
                UnixStreamSocket.Credentials(pid: 4242, uid: uid, gid: uid))
        }
        return transport
    }

    func send(_ line: String, from client: MemoryTransport) {
        onQueue { _ in client.send(line) }
    }

    func receive(_ client: MemoryTransport) -> [[String: Any]] {
        let messages = onQueue { _ in UncheckedBox(client.receive()) }
        return messages.value
    }

    func advance(by seconds: Double) {
        let clock = clock
        onQueue { _ in clock.advance(by: seconds) }
    }

    func emit(_ event: GPSDSource.Event) {
        let source = source
        onQueue { _ in source.emit(event) }
    }

    /// A 3D fix at the clock's current wall time.
    func fix(latitude: Double, longitude: Double = 10, speed: Double = 0) {
        let location = onQueue { daemon in
            Location(
                latitude: latitude, longitude: longitude, mode: .threeD, horizontalAccuracy: 5, speed: speed,
                course: 90, timestamp: daemon.clock.wallNow(), receivedAt: daemon.clock.wallNow(),
                device: "/dev/ttyTEST")
        }
        emit(.fix(location))
    }

    func stop() {
        onQueue { $0.shutDown() }
    }
}

/// Carries JSON objects (`[String: Any]`, not Sendable) out of `queue.sync`.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension [String: Any] {
    var embeddedEvent: String? { self["event"] as? String }
    var embeddedNotification: String? {
        embeddedEvent == "didGetNotification" ? self["notification"] as? String : nil
    }
    var embeddedLatitude: Double? {
        (self["location"] as? [String: Any])?["latitude"] as? Double
    }
}
