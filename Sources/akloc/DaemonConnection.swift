import AklocCore
import AklocJSON
import AklocPosix
import AklocProtocol
import Glibc

/// A blocking connection to aklocd over its Unix socket: reads the `hello`,
/// sends requests, and matches replies to them by id.
final class DaemonConnection {
    let path: String
    private let socket: UnixStreamSocket
    private var framer = LineFramer(maxLineLength: ServerEvent.maxLineLength)
    private var nextID: Int64 = 1
    /// The daemon's hello; nil only while connecting.
    private(set) var hello: ServerEvent.Hello?

    /// Connects and reads the `hello`. `timeout` (seconds, 0 = none) bounds
    /// every later wait for the daemon.
    init(path: String, timeout: Double) throws(CLIError) {
        self.path = path
        socket = try Self.connect(path: path)
        setTimeout(timeout)
        // A hello of another protocol version does not decode (nextMessage says why).
        guard case (_, let message)? = try nextMessage() else {
            throw .unreachable("aklocd at \(path) closed the connection before saying hello")
        }
        guard case .hello(let hello) = message else {
            throw .failure("\(path) did not start with a hello: is it aklocd?")
        }
        self.hello = hello
    }

    deinit { socket.close() }

    /// Bounds each wait for data; 0 waits forever.
    func setTimeout(_ seconds: Double) {
        try? socket.setReceiveTimeout(seconds: seconds)
        timeoutSeconds = seconds
    }

    private var timeoutSeconds: Double = 0

    /// Sends a request the protocol types (AklocProtocol's `ClientRequest`
    /// encodes it, as it does for the client library) and returns the id used.
    @discardableResult
    func send(_ operation: ClientRequest.Operation) throws(CLIError) -> RequestID {
        let id = takeID()
        try write(ClientRequest(id: id, operation: operation).encodedLine())
        return id
    }

    /// What the daemon sent besides replies: the line as it came, and decoded.
    typealias Event = (line: [UInt8], event: ServerEvent)

    /// Sends one typed request and waits for its reply; events that arrive
    /// first go to `onEvent`. An error reply throws.
    func call(
        _ operation: ClientRequest.Operation, onEvent: (Event) throws(CLIError) -> Void = { _ in }
    ) throws(CLIError) -> JSONValue {
        try reply(to: try send(operation), of: operation.name, onEvent: onEvent)
    }

    private func takeID() -> RequestID {
        defer { nextID += 1 }
        return .int(nextID)
    }

    private func reply(
        to id: RequestID, of op: String, onEvent: (Event) throws(CLIError) -> Void
    ) throws(CLIError) -> JSONValue {
        while true {
            guard case (let line, let message)? = try nextMessage() else {
                throw .unreachable("aklocd closed the connection before answering \(op)")
            }
            switch message {
            case .reply(let replyID, let result) where replyID == id:
                switch result {
                case .success(let value): return value
                case .failure(let error): throw .reply(error)
                }
            case .reply, .hello:
                continue
            default:
                try onEvent((line, message))
            }
        }
    }

    /// The next message from the daemon with its raw line, or nil when the
    /// daemon closed the connection.
    func nextMessage() throws(CLIError) -> ([UInt8], ServerEvent)? {
        while true {
            if let frame = framer.next() {
                switch frame {
                case .lineTooLong:
                    throw .failure("aklocd sent a line longer than \(ServerEvent.maxLineLength) bytes")
                case .line(let line):
                    switch ServerEvent.decode(line) {
                    case .success(let message): return (line, message)
                    case .failure(let error): throw .failure("unexpected message from aklocd: \(error.message)")
                    }
                }
            }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let received: UnixStreamSocket.Received
            switch buffer.withUnsafeMutableBytes({ raw in
                Result { () throws(SocketError) in try socket.receive(into: raw, blocking: true) }
            }) {
            case .success(let value): received = value
            case .failure(let error): throw .unreachable("reading from \(path): \(error.error.message)")
            }
            switch received {
            case .bytes(let count):
                buffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            case .endOfFile:
                return nil
            case .wouldBlock:
                throw .unreachable("aklocd at \(path) did not answer within \(format(timeoutSeconds)) s")
            }
        }
    }

    private func write(_ bytes: [UInt8]) throws(CLIError) {
        do {
            try socket.sendAll(bytes)
        } catch {
            throw .unreachable("writing to aklocd at \(path): \(error.error.message)")
        }
    }

    private static func connect(path: String) throws(CLIError) -> UnixStreamSocket {
        do {
            return try UnixStreamSocket.connect(path: path, nonBlocking: false)
        } catch {
            if let invalid = error.invalidAddress { throw .usage("--socket: \(invalid)") }
            let reason = error.error.message
            switch error.errno {
            case EACCES, EPERM:
                throw CLIError(
                    exitCode: ExitCode.forbidden,
                    message: "cannot connect to aklocd at \(path): \(reason) (see docs/cli.md: who may use the socket)")
            case ENOENT, ECONNREFUSED, ENOTDIR:
                throw .unreachable(
                    "cannot connect to aklocd at \(path): \(reason). Is aklocd running? "
                        + "(`systemctl status akloc.socket aklocd.service`; another socket: --socket PATH or AKLOC_SOCKET)"
                )
            default:
                throw .unreachable("cannot connect to aklocd at \(path): \(reason)")
            }
        }
    }
}
