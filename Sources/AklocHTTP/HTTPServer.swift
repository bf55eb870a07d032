import AklocCore
import AklocJSON
import AklocPosix
import Dispatch

/// An HTTP/1.1 server for one page: GET only, one request per connection,
/// and event streams kept open for server-sent events (`akloc map`).
///
/// Accepting and writing are the `StreamServer`'s and each connection's
/// `BufferedStream`'s; what a connection waits for and until when is its
/// `HTTPConnection`. Everything runs on `queue`. What a client can cost is
/// bounded: a request head must arrive whole within `headTimeout` and fit
/// `HTTPRequestHead.maxBytes` (slowloris and huge headers get 408/431 and a
/// close), a response must drain within `writeTimeout`, an event stream
/// that falls `maxQueuedEventBytes` behind, or stays stalled for
/// `writeTimeout`, is dropped, and past `maxConnections` new ones get 503
/// at once. A closed browser tab shows up as end-of-file on its stream,
/// which frees it. The clock is injected, so the tests run it on virtual
/// time.
public final class HTTPServer: @unchecked Sendable {
    // @unchecked: state is touched only on `queue`; `broadcast` and
    // deferred answers hop onto it.

    public struct Limits: Equatable, Sendable {
        public var maxConnections = 1000
        public var headTimeout = 10.0
        public var writeTimeout = 30.0
        public var maxQueuedEventBytes = 1 << 20
        public var keepAliveInterval = 15.0

        public init() {}
    }

    /// How a request is answered.
    public enum Route: Sendable {
        case response(HTTPResponse)
        /// An event stream: the head, then `initialEvents()`, then every broadcast.
        case eventStream
        /// `{"connections":N,"streams":N}`: what the server holds now.
        case health
        /// Answered later, off the queue (data fetched elsewhere): the
        /// closure gets a completion to call from any thread.
        case deferred(@Sendable (_ complete: @escaping @Sendable (HTTPResponse) -> Void) -> Void)
    }

    public let queue: DispatchQueue
    private let limits: Limits
    private let headers: [HTTPResponse.Header]
    private let router: (HTTPRequestHead) -> Route
    private let initialEvents: () -> [UInt8]
    private let clock: any ShellClock
    private var acceptor: StreamServer<TCPListener>!
    private var sweepTimer: (any ShellTimer)?
    private var connections: [ObjectIdentifier: Connection] = [:]
    private var lastKeepAlive: Instant?
    private var running = false

    private final class Connection {
        var stream: BufferedStream
        /// Past it, the stream is dropped (`maxQueuedEventBytes` once it streams events).
        var byteCap = Int.max
        var exchange: HTTPConnection

        init(_ stream: BufferedStream, _ exchange: HTTPConnection) {
            self.stream = stream
            self.exchange = exchange
        }
    }

    /// `headers` go on every answer. `router` and `initialEvents` are
    /// called on `queue`, where `clock`'s timers must run; `acceptFailed`
    /// hears each failed accept that pauses accepting (to log it).
    public init(
        listener: TCPListener, queue: DispatchQueue, clock: any ShellClock, limits: Limits = Limits(),
        headers: [HTTPResponse.Header], router: @escaping (HTTPRequestHead) -> Route,
        initialEvents: @escaping () -> [UInt8], acceptFailed: @escaping (SocketError) -> Void = { _ in }
    ) {
        self.queue = queue
        self.limits = limits
        self.headers = headers
        self.router = router
        self.initialEvents = initialEvents
        self.clock = clock
        acceptor = StreamServer(
            listener: listener, queue: queue, clock: clock,
            acceptFailed: acceptFailed,
            accepted: { [weak self] stream, _ in self?.accept(stream) })
    }

    /// Starts accepting, and the once-a-second sweep. On `queue`.
    public func start() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !running else { return }
        running = true
        acceptor.start()
        let sweepTimer = clock.makeTimer { [weak self] in self?.sweep() }
        sweepTimer.schedule(after: 1, on: clock, leeway: 0.1)
        self.sweepTimer = sweepTimer
    }

    /// Closes the listener and every connection. On `queue`.
    public func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        running = false
        sweepTimer?.cancel()
        sweepTimer = nil
        acceptor.stop()
        for connection in connections.values { connection.stream.close() }
        connections.removeAll()
    }

    /// Sends `bytes` (one or more complete events) to every open stream; from any thread.
    public func broadcast(_ bytes: [UInt8]) {
        queue.async { [self] in
            for connection in Array(connections.values) where connection.exchange.isStreaming {
                send(bytes, on: connection)
            }
        }
    }

    /// The open connections. On `queue`.
    public var connectionCount: Int { connections.count }

    /// The open event streams. On `queue`.
    public var streamCount: Int { connections.values.count { $0.exchange.isStreaming } }

    /// The event streams with bytes waiting for their reader. On `queue`.
    public var stalledStreamCount: Int {
        connections.values.count {
            if case .streaming(let since) = $0.exchange.state { return since != nil }
            return false
        }
    }

    /// Does now what the descriptors' watches do when they fire: accepts
    /// what waits and reads every connection. For tests that step the
    /// server by hand; the watches make it redundant, never wrong.
    func poll() {
        acceptor.acceptPending()
        for connection in Array(connections.values) { readable(connection) }
    }

    // MARK: Connections

    private func accept(_ stream: BufferedStream) {
        let now = clock.now()
        guard connections.count < limits.maxConnections else {
            let (exchange, action) = HTTPConnection.overLimit(at: now, limits: limits)
            let connection = add(stream, exchange)
            perform(action, on: connection)
            return
        }
        let connection = add(stream, HTTPConnection(acceptedAt: now, limits: limits))
        stream.watchReadable(on: queue) { [weak self, weak connection] in
            guard let self, let connection else { return }
            self.readable(connection)
        }
    }

    private func add(_ stream: BufferedStream, _ exchange: HTTPConnection) -> Connection {
        let connection = Connection(stream, exchange)
        connections[ObjectIdentifier(connection)] = connection
        return connection
    }

    private func readable(_ connection: Connection) {
        guard connections[ObjectIdentifier(connection)] != nil else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let received: UnixStreamSocket.Received
        switch buffer.withUnsafeMutableBytes({ raw in
            Result { () throws(SocketError) in try connection.stream.read(into: raw) }
        }) {
        case .success(let value): received = value
        case .failure:
            close(connection)
            return
        }
        switch received {
        case .wouldBlock: return
        case .endOfFile:
            // A closed tab, or a client that gave up. An answer being made
            // or written has no one left to read it either.
            close(connection)
        case .bytes(let count):
            perform(connection.exchange.received(buffer[..<count], at: clock.now()), on: connection)
        }
    }

    private func perform(_ action: HTTPConnection.Action, on connection: Connection) {
        switch action {
        case .wait: break
        case .route(let head): route(head, on: connection)
        case .respond(let response): send(response.bytes(common: headers), on: connection)
        case .send(let bytes): send(bytes, on: connection)
        case .close: close(connection)
        }
    }

    private func route(_ head: HTTPRequestHead, on connection: Connection) {
        switch router(head) {
        case .response(let response):
            connection.exchange.responding(at: clock.now())
            send(response.bytes(common: headers), on: connection)
        case .health:
            let body: JSONValue = ["connections": .int(Int64(connections.count)), "streams": .int(Int64(streamCount))]
            connection.exchange.responding(at: clock.now())
            let response = HTTPResponse(status: 200, contentType: "application/json", body: body.jsonBytes)
            send(response.bytes(common: headers), on: connection)
        case .eventStream:
            connection.exchange.streaming()
            connection.byteCap = limits.maxQueuedEventBytes
            send(HTTPResponse.eventStreamHead(common: headers) + initialEvents(), on: connection)
        case .deferred(let work):
            let id = ObjectIdentifier(connection)
            DispatchQueue.global().async {
                work { response in
                    self.queue.async { [self] in
                        guard let connection = connections[id], connection.exchange.awaitsAnswer else { return }
                        connection.exchange.responding(at: clock.now())
                        send(response.bytes(common: headers), on: connection)
                    }
                }
            }
        }
    }

    private func send(_ bytes: [UInt8], on connection: Connection) {
        let sent = connection.stream.send(
            bytes, byteCap: connection.byteCap, waitingOn: queue,
            { [weak self, weak connection] in
                guard let self, let connection else { return }
                self.writable(connection)
            })
        perform(connection.exchange.wrote(sent, at: clock.now()), on: connection)
    }

    private func writable(_ connection: Connection) {
        switch connection.stream.writable() {
        case .drained: perform(connection.exchange.drained(), on: connection)
        case .blocked: break
        case .failed: close(connection)
        }
    }

    private func close(_ connection: Connection) {
        guard connections.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return }
        connection.stream.close()
    }

    // MARK: Time

    /// Once a second: deadlines, stalled streams, keep-alive comments
    /// (which also find streams whose peer vanished without a FIN).
    func sweep() {
        sweepTimer?.schedule(after: 1, on: clock, leeway: 0.1)
        let now = clock.now()
        let keepAlive = lastKeepAlive.map { now.seconds(since: $0) >= limits.keepAliveInterval } ?? true
        if keepAlive { lastKeepAlive = now }
        for connection in Array(connections.values) {
            perform(connection.exchange.tick(at: now, keepAlive: keepAlive), on: connection)
        }
    }
}
