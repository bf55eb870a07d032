import AklocJSON
import AklocPosix
import Dispatch

/// `akloc map`'s HTTP/1.1 page server: GET only, one request per
/// connection, and `/events` streams kept open for server-sent events.
///
/// Everything runs on one serial queue, watched through `FileDescriptor`
/// (the project's epoll poller). What a client can cost is bounded: a
/// request head must arrive whole within `headTimeout` and fit
/// `HTTPRequestHead.maxBytes` (slowloris and huge headers get 408/431 and a
/// close), a response must drain within `writeTimeout`, an event stream
/// that falls `maxQueuedEventBytes` behind is dropped, and past
/// `maxConnections` new ones get 503 at once. A closed browser tab shows
/// up as end-of-file on its stream, which frees it.
final class MapServer: @unchecked Sendable {
    // @unchecked: state is touched only on `queue`; `broadcast` hops onto it.

    struct Limits {
        var maxConnections = 1000
        var headTimeout = 10.0
        var writeTimeout = 30.0
        var maxQueuedEventBytes = 1 << 20
        var keepAliveInterval = 15.0
    }

    /// How a request is answered.
    enum Route {
        case response(HTTPResponse)
        /// An `/events` stream: the head, then `initialEvents()`, then every broadcast.
        case eventStream
        /// `{"connections":N,"streams":N}`: what the server holds now.
        case health
        /// Answered later, off the queue (data fetched from aklocd): the
        /// closure gets a completion to call from any thread.
        case deferred(@Sendable (_ complete: @escaping @Sendable (HTTPResponse) -> Void) -> Void)
    }

    let queue = DispatchQueue(label: "akloc.map.server")
    private let listener: FileDescriptor
    private let router: (HTTPRequestHead) -> Route
    private let initialEvents: () -> [UInt8]
    private let imageSources: String
    private let limits: Limits
    private var connections: [ObjectIdentifier: Connection] = [:]
    private var acceptWatch: FileDescriptor.Watch?
    private var timer: (any DispatchSourceTimer)?
    private var lastKeepAlive = 0.0

    /// `router` and `initialEvents` are called on `queue`.
    init(
        listener: FileDescriptor, limits: Limits = Limits(), imageSources: String,
        router: @escaping (HTTPRequestHead) -> Route, initialEvents: @escaping () -> [UInt8]
    ) {
        self.listener = listener
        self.limits = limits
        self.imageSources = imageSources
        self.router = router
        self.initialEvents = initialEvents
    }

    func start() {
        queue.async { [self] in
            acceptWatch = listener.watch(.readable, on: queue) { [weak self] in self?.acceptAll() }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + 1, repeating: 1)
            timer.setEventHandler { [weak self] in self?.sweep() }
            timer.resume()
            self.timer = timer
        }
    }

    /// Sends `bytes` (one or more complete SSE events) to every open stream.
    func broadcast(_ bytes: [UInt8]) {
        queue.async { [self] in
            for connection in connections.values where connection.isStreaming { enqueue(bytes, on: connection) }
        }
    }

    /// The open event streams.
    var streamCount: Int {
        dispatchPrecondition(condition: .onQueue(queue))
        return connections.values.filter(\.isStreaming).count
    }

    // MARK: Connections

    private final class Connection {
        enum State {
            /// Until the blank line ending the head, or the deadline.
            case readingHead(deadline: Double)
            /// A deferred route is working on the answer.
            case awaitingAnswer(deadline: Double)
            /// Writing a response, closing when it is out.
            case responding(deadline: Double)
            /// An event stream; `stalledSince` while bytes wait for the client.
            case streaming(stalledSince: Double?)
        }

        let descriptor: FileDescriptor
        var state: State
        var input: [UInt8] = []
        var output: [UInt8] = []
        var readWatch: FileDescriptor.Watch?
        var writeWatch: FileDescriptor.Watch?

        init(_ descriptor: FileDescriptor, now: Double, headTimeout: Double) {
            self.descriptor = descriptor
            state = .readingHead(deadline: now + headTimeout)
        }

        var isStreaming: Bool {
            if case .streaming = state { return true }
            return false
        }
    }

    private static func now() -> Double { Double(PosixClock.monotonic.nanoseconds()) / 1e9 }

    private func acceptAll() {
        while true {
            let accepted: TCPListener.Accepted
            do {
                accepted = try TCPListener.accept(listener.rawValue)
            } catch {
                Output.error("akloc map: accept: \(error)")
                return
            }
            switch accepted {
            case .wouldBlock: return
            case .exhausted:
                // Out of descriptors: stop accepting until the sweep, so the
                // level-triggered listener does not spin the queue.
                acceptWatch?.suspend()
                return
            case .connection(let descriptor):
                let connection = Connection(descriptor, now: Self.now(), headTimeout: limits.headTimeout)
                if connections.count >= limits.maxConnections {
                    connection.state = .responding(deadline: Self.now() + 1)
                    connections[ObjectIdentifier(connection)] = connection
                    send(.error(503, "too many connections"), on: connection)
                    continue
                }
                connections[ObjectIdentifier(connection)] = connection
                connection.readWatch = descriptor.watch(.readable, on: queue) { [weak self, weak connection] in
                    guard let self, let connection else { return }
                    self.readable(connection)
                }
            }
        }
    }

    private func readable(_ connection: Connection) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let received: UnixStreamSocket.Received
        switch buffer.withUnsafeMutableBytes({ raw in
            Result { () throws(SocketError) in try UnixStreamSocket(connection.descriptor).receive(into: raw) }
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
            guard case .readingHead = connection.state else { return }  // nothing more is read after the head
            connection.input += buffer[..<count]
            switch HTTPRequestHead.parse(connection.input) {
            case .incomplete: return
            case .refused(let status, let reason):
                connection.state = .responding(deadline: Self.now() + limits.writeTimeout)
                send(.error(status, reason), on: connection)
            case .request(let head):
                connection.input = []
                route(head, on: connection)
            }
        }
    }

    private func route(_ head: HTTPRequestHead, on connection: Connection) {
        let now = Self.now()
        switch router(head) {
        case .response(let response):
            connection.state = .responding(deadline: now + limits.writeTimeout)
            send(response, on: connection)
        case .health:
            let body: JSONValue = ["connections": .int(Int64(connections.count)), "streams": .int(Int64(streamCount))]
            connection.state = .responding(deadline: now + limits.writeTimeout)
            send(HTTPResponse(status: 200, contentType: "application/json", body: body.jsonBytes), on: connection)
        case .eventStream:
            connection.state = .streaming(stalledSince: nil)
            enqueue(HTTPResponse.eventStreamHead(imageSources: imageSources) + initialEvents(), on: connection)
        case .deferred(let work):
            connection.state = .awaitingAnswer(deadline: now + limits.writeTimeout)
            let id = ObjectIdentifier(connection)
            DispatchQueue.global().async {
                work { response in
                    self.queue.async { [self] in
                        guard let connection = connections[id], case .awaitingAnswer = connection.state else { return }
                        connection.state = .responding(deadline: Self.now() + limits.writeTimeout)
                        send(response, on: connection)
                    }
                }
            }
        }
    }

    private func send(_ response: HTTPResponse, on connection: Connection) {
        enqueue(response.bytes(imageSources: imageSources), on: connection)
    }

    private func enqueue(_ bytes: [UInt8], on connection: Connection) {
        if case .streaming = connection.state, connection.output.count + bytes.count > limits.maxQueuedEventBytes {
            close(connection)  // a stream this far behind is not being read
            return
        }
        connection.output += bytes
        flush(connection)
    }

    private func flush(_ connection: Connection) {
        while !connection.output.isEmpty {
            let sent: Int
            switch connection.output.withUnsafeBytes({ raw in
                Result { () throws(SocketError) in try UnixStreamSocket(connection.descriptor).send(raw) }
            }) {
            case .success(let count): sent = count
            case .failure:
                close(connection)
                return
            }
            if sent == 0 { break }
            connection.output.removeFirst(sent)
        }
        if connection.output.isEmpty {
            connection.writeWatch?.cancel()
            connection.writeWatch = nil
            switch connection.state {
            case .responding: close(connection)
            case .streaming: connection.state = .streaming(stalledSince: nil)
            case .readingHead, .awaitingAnswer: break
            }
            return
        }
        if case .streaming(nil) = connection.state { connection.state = .streaming(stalledSince: Self.now()) }
        if connection.writeWatch == nil {
            connection.writeWatch = connection.descriptor.watch(.writable, on: queue) {
                [weak self, weak connection] in
                guard let self, let connection else { return }
                self.flush(connection)
            }
        }
    }

    private func close(_ connection: Connection) {
        guard connections.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return }
        connection.descriptor.close()
    }

    /// Once a second: deadlines, stalled streams, keep-alive comments (which
    /// also find streams whose peer vanished without a FIN).
    private func sweep() {
        let now = Self.now()
        acceptWatch?.resume()
        let keepAlive = now - lastKeepAlive >= limits.keepAliveInterval
        if keepAlive { lastKeepAlive = now }
        for connection in Array(connections.values) {
            switch connection.state {
            case .readingHead(let deadline):
                if now >= deadline {
                    connection.state = .responding(deadline: now + 1)
                    send(.error(408, "the request head took longer than \(Int(limits.headTimeout)) s"), on: connection)
                }
            case .awaitingAnswer(let deadline), .responding(let deadline):
                if now >= deadline { close(connection) }
            case .streaming(let stalledSince):
                if let stalledSince, now - stalledSince >= limits.writeTimeout {
                    close(connection)
                } else if keepAlive {
                    enqueue(Array(": keep-alive\n\n".utf8), on: connection)
                }
            }
        }
    }
}
