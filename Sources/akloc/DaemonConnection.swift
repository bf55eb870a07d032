import AklocCore
import AklocJSON
import AklocProtocol
import Glibc

/// A blocking connection to aklocd over its Unix socket: reads the `hello`,
/// sends requests, and matches replies to them by id.
final class DaemonConnection {
    let path: String
    private let fd: Int32
    private var framer = LineFramer(maxLineLength: 1 << 20)
    private var nextID: Int64 = 1
    private(set) var hello: ServerMessage.Hello

    /// Connects and reads the `hello`. `timeout` (seconds, 0 = none) bounds
    /// every later wait for the daemon.
    init(path: String, timeout: Double) throws(CLIError) {
        self.path = path
        fd = try Self.connect(path: path)
        hello = ServerMessage.Hello(protocolVersion: 0, version: "", authorizationStatus: "")
        setTimeout(timeout)
        guard case (_, let message)? = try nextMessage() else {
            throw .unreachable("aklocd at \(path) closed the connection before saying hello")
        }
        guard case .hello(let hello) = message else {
            throw .failure("\(path) did not start with a hello: is it aklocd?")
        }
        guard hello.protocolVersion == Int64(AklocProtocolVersion.protocolVersion) else {
            throw .failure(
                "aklocd at \(path) speaks protocol \(hello.protocolVersion), this akloc speaks "
                    + "\(AklocProtocolVersion.protocolVersion)")
        }
        self.hello = hello
    }

    deinit { close(fd) }

    /// Bounds each wait for data; 0 waits forever.
    func setTimeout(_ seconds: Double) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        timeoutSeconds = seconds
    }

    private var timeoutSeconds: Double = 0

    /// Sends `{"id":…,"op":op,…arguments}` and returns the id used.
    @discardableResult
    func send(op: String, _ arguments: [String: JSONValue] = [:]) throws(CLIError) -> RequestID {
        let id = RequestID.int(nextID)
        nextID += 1
        var object = arguments
        object["id"] = id.json
        object["op"] = .string(op)
        var bytes = JSONValue.object(object).jsonBytes
        bytes.append(0x0A)
        try write(bytes)
        return id
    }

    /// Sends one request and waits for its reply; events that arrive first
    /// go to `onEvent`. An error reply throws.
    func call(
        op: String, _ arguments: [String: JSONValue] = [:],
        onEvent: (_ line: [UInt8], _ name: String, _ fields: [String: JSONValue]) throws(CLIError) -> Void = {
            _, _, _ in
        }
    ) throws(CLIError) -> JSONValue {
        let id = try send(op: op, arguments)
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
            case .event(let name, let fields):
                try onEvent(line, name, fields)
            case .reply, .hello:
                continue
            }
        }
    }

    /// The next message from the daemon with its raw line, or nil when the
    /// daemon closed the connection.
    func nextMessage() throws(CLIError) -> ([UInt8], ServerMessage)? {
        while true {
            if let frame = framer.next() {
                switch frame {
                case .lineTooLong:
                    throw .failure("aklocd sent a line longer than 1 MiB")
                case .line(let line):
                    switch ServerMessage.decode(line) {
                    case .success(let message): return (line, message)
                    case .failure(let error): throw .failure("unexpected message from aklocd: \(error.message)")
                    }
                }
            }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            } else if count == 0 {
                return nil
            } else {
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK:
                    throw .unreachable("aklocd at \(path) did not answer within \(format(timeoutSeconds)) s")
                case ECONNRESET: return nil
                default: throw .unreachable("reading from \(path): \(String(cString: strerror(errno)))")
                }
            }
        }
    }

    private func write(_ bytes: [UInt8]) throws(CLIError) {
        var failure: Int32 = 0
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written >= 0 {
                    offset += written
                } else if errno != EINTR {
                    failure = errno
                    return
                }
            }
        }
        if failure != 0 {
            throw .unreachable("writing to aklocd at \(path): \(String(cString: strerror(failure)))")
        }
    }

    private static func connect(path: String) throws(CLIError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw .usage("socket path is longer than \(capacity - 1) bytes: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .failure("socket: \(String(cString: strerror(errno)))") }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result == 0 { return fd }
        let error = errno
        close(fd)
        let reason = String(cString: strerror(error))
        switch error {
        case EACCES, EPERM:
            throw CLIError(
                exitCode: ExitCode.forbidden,
                message: "cannot connect to aklocd at \(path): \(reason) (see docs/cli.md: who may use the socket)")
        case ENOENT, ECONNREFUSED, ENOTDIR:
            throw .unreachable(
                "cannot connect to aklocd at \(path): \(reason). Is aklocd running? "
                    + "(`systemctl status akloc.socket aklocd.service`; another socket: --socket PATH or AKLOC_SOCKET)")
        default:
            throw .unreachable("cannot connect to aklocd at \(path): \(reason)")
        }
    }
}
