import AklocCore
import AklocPosix
import AklocProtocol
import Dispatch

/// The client server: the listening socket (a `StreamServer`, with its
/// accept back-off) and every connection (a `BufferedStream` each, with its
/// coalescing and byte cap). It applies the slow-reader rules (a client
/// past the hard limit is dropped); what a request means, who may have
/// fixes and what the engine is told is the daemon's, reached through
/// `Handlers` on the daemon's queue.
///
/// Confinement: every method on the daemon's queue.
final class ClientServer: Component {
    let name = "client server"

    /// Where clients come from.
    enum Listening {
        /// Bind `path` with `mode` (removed again at stop).
        case path(String, mode: UInt32)
        /// The listening socket systemd passed in.
        case activated(Int32)
        /// None: clients are handed in with `accepted` (the embedded-daemon tests).
        case none
    }

    /// What the daemon does when the server hears something. Only
    /// Sendable values cross, so the daemon's handlers can enter its actor.
    struct Handlers {
        /// Who a new connection is: its identity and whether it is an administrator.
        var identify: (UnixStreamSocket.Credentials) -> (Authorizer.Identity, isAdmin: Bool) = {
            (Authorizer.Identity(uid: $0.uid, userName: nil, groupNames: []), false)
        }
        /// A connection was admitted as a client (the daemon says hello, tells the engine).
        var admitted: (SubscriberID) -> Void = { _ in }
        /// One complete request line.
        var line: ([UInt8], SubscriberID) -> Void = { _, _ in }
        /// A line over the framer's limit (the server answers and closes).
        var lineTooLong: (SubscriberID) -> Void = { _ in }
        /// The server lets a client go (slow reader, failed read or write).
        var dropped: (SubscriberID) -> Void = { _ in }
        /// A client is gone, for whatever reason: it is no longer in `clients`.
        var gone: (SubscriberID, UnixStreamSocket.Credentials) -> Void = { _, _ in }
    }

    /// Why a client leaves while the daemon writes to it.
    enum Departure: Sendable, Equatable {
        /// The daemon lets it go (a slow reader past the cap, a failed write).
        case dropped(String)
        /// The peer had already closed (EPIPE, ECONNRESET): an ordinary
        /// disconnect whose end of file the daemon had not read yet, not a drop.
        case closedByPeer
    }

    /// What became of bytes given to `send`.
    enum SendOutcome: Equatable {
        /// All written to the stream now.
        case written
        /// Queued behind what the client has not read yet.
        case queued
        /// Queued, replacing an unsent location event of the same stream.
        case coalesced
        /// The client must leave (the caller departs it once its step is done).
        case mustLeave(Departure)
        /// The client is closed or unknown; nothing was sent.
        case notConnected
    }

    var handlers = Handlers()
    /// Bytes a client may have queued before it is dropped (`[socket] client_hard_limit`).
    var hardLimit: Int
    private(set) var clients: [SubscriberID: ClientConnection] = [:]
    private var nextID: SubscriberID = 1

    var listening: Listening
    private let queue: DispatchQueue
    private let clock: any ShellClock
    private let logger: (LogLevel, String, KeyValuePairs<String, String>) -> Void
    private var acceptor: StreamServer<UnixListeningSocket>?

    init(
        listening: Listening, hardLimit: Int, queue: DispatchQueue, clock: any ShellClock,
        log: @escaping (LogLevel, String, KeyValuePairs<String, String>) -> Void
    ) {
        self.listening = listening
        self.hardLimit = hardLimit
        self.queue = queue
        self.clock = clock
        self.logger = log
    }

    private func log(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        logger(level, message, fields)
    }

    /// A subscriber id no client has: the MQTT forwarder is one more engine subscriber.
    func reserveID() -> SubscriberID {
        defer { nextID += 1 }
        return nextID
    }

    // MARK: Component

    func start() throws(ComponentError) {
        let listener: UnixListeningSocket
        do {
            switch listening {
            case .none:
                return
            case .activated(let fd):
                listener = try UnixListeningSocket(activated: fd)
            case .path(let path, let mode):
                listener = try UnixListeningSocket.listen(path: path, mode: mode)
            }
        } catch {
            throw ComponentError(.cannotListen, component: name, "\(error)")
        }
        let acceptor = StreamServer(
            listener: listener, queue: queue, clock: clock,
            acceptFailed: { [weak self] error in
                self?.log(.warning, "accept failed (\(error)): not accepting until a client leaves or for 1 s")
            },
            accepted: { [weak self] stream, credentials in self?.accept(stream, credentials) })
        self.acceptor = acceptor
        acceptor.start()
    }

    /// One last non-blocking flush each (a client that cannot take it now
    /// would only delay the exit systemd waits for), then every stream and
    /// the listener closed, and the socket file it bound removed.
    func stop() {
        for client in clients.values {
            client.stream.flush()
            client.close()
        }
        clients.removeAll()
        acceptor?.stop()
        acceptor = nil
    }

    // MARK: Accepting

    /// Takes a connected stream in as a new client, reading from it from
    /// now on (the listener's accepts, and the embedded tests' pipes).
    func accept(_ stream: BufferedStream, _ credentials: UnixStreamSocket.Credentials) {
        let (identity, isAdmin) = handlers.identify(credentials)
        let id = reserveID()
        let client = ClientConnection(
            id: id, stream: stream, credentials: credentials, identity: identity, isAdmin: isAdmin,
            connectedAt: clock.now())
        clients[id] = client
        stream.watchReadable(on: queue) { [weak self] in self?.readable(id) }
        handlers.admitted(id)
    }

    // MARK: Reading

    /// Reads what the client sent; each complete line goes to the daemon.
    func readable(_ id: SubscriberID) {
        guard let client = clients[id] else { return }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        // A few reads per wake-up at most, so one chatty client cannot starve the rest.
        for _ in 0..<4 {
            let result: UnixStreamSocket.Received
            do {
                result = try buffer.withUnsafeMutableBytes { try client.stream.read(into: $0) }
            } catch {
                drop(id, reason: "read failed: \(error)")
                return
            }
            switch result {
            case .wouldBlock:
                return
            case .endOfFile:
                disconnect(id, reason: client.framer.pendingByteCount == 0 ? nil : "closed mid-line")
                return
            case .bytes(let count):
                guard receive(buffer[0..<count], from: client) else { return }
            }
        }
    }

    /// Frames received bytes into request lines; false when the client was closed.
    private func receive(_ bytes: ArraySlice<UInt8>, from client: ClientConnection) -> Bool {
        client.framer.append(contentsOf: bytes)
        while let frame = client.framer.next() {
            switch frame {
            case .line(let line):
                handlers.line(line, client.id)
                if client.isClosed || clients[client.id] == nil { return false }
            case .lineTooLong:
                handlers.lineTooLong(client.id)
                let error = ProtocolError(
                    .lineTooLong, "a request line must be at most \(client.framer.maxLineLength) bytes")
                _ = send(ServerEncoder.reply(error: error), to: client)
                client.stream.flush()
                disconnect(client.id, reason: "line over \(client.framer.maxLineLength) bytes")
                return false
            }
        }
        return true
    }

    // MARK: Writing

    /// Writes bytes to a client now, or queues them (`BufferedStream`);
    /// a client past the hard limit must leave.
    func send(
        _ bytes: [UInt8], stream key: OutboundQueue.CoalescingKey? = nil, to client: ClientConnection
    ) -> SendOutcome {
        let id = client.id
        let sent = client.stream.send(
            bytes, coalescingKey: key, byteCap: hardLimit, waitingOn: queue, { [weak self] in self?.writable(id) })
        switch sent {
        case .written: return .written
        case .queued: return .queued
        case .coalesced: return .coalesced
        case .overCap(let queued):
            return .mustLeave(.dropped("slow reader: \(queued) bytes queued, over the limit of \(hardLimit)"))
        case .failed(let error): return .mustLeave(Self.departure(after: error))
        case .closed: return .notConnected
        }
    }

    /// A blocked client's socket takes bytes again.
    func writable(_ id: SubscriberID) {
        guard let client = clients[id] else { return }
        if case .failed(let error) = client.stream.writable() { depart(id, Self.departure(after: error)) }
    }

    static func departure(after error: SocketError) -> Departure {
        error.isPeerGone ? .closedByPeer : .dropped("write failed: \(error)")
    }

    // MARK: Leaving

    func depart(_ id: SubscriberID, _ departure: Departure) {
        switch departure {
        case .dropped(let reason): drop(id, reason: reason)
        case .closedByPeer: disconnect(id, reason: nil)
        }
    }

    /// The client went away (or must go): close it, tell the daemon.
    func disconnect(_ id: SubscriberID, reason: String?) {
        guard let client = clients.removeValue(forKey: id) else { return }
        // The stream tells the acceptor once its descriptor is free.
        client.close()
        if let reason {
            log(.info, "client \(id) disconnected: \(reason)", ["AKLOC_CLIENT_UID": "\(client.credentials.uid)"])
        }
        handlers.gone(id, client.credentials)
    }

    func drop(_ id: SubscriberID, reason: String) {
        guard let client = clients[id] else { return }
        handlers.dropped(id)
        log(
            .warning, "dropping client \(id) (uid \(client.credentials.uid), pid \(client.credentials.pid)): \(reason)",
            ["AKLOC_CLIENT_UID": "\(client.credentials.uid)"])
        disconnect(id, reason: nil)
    }
}
