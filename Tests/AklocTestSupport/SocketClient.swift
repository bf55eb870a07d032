import AklocPosix
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A raw NDJSON client of aklocd's Unix socket for tests: blocking writes,
/// reads bounded by poll(2) timeouts, never a sleep. Not thread-safe: one
/// thread per client (hence unchecked Sendable, for tests that read many at once).
public final class SocketClient: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    public let fd: Int32
    private var buffer: [UInt8] = []
    private var nextID = 1
    /// Every line received so far, in order (for scanning what a peer was sent).
    public private(set) var transcript: [String] = []

    public init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket: \(String(cString: strerror(errno)))") }
        do {
            try UnixSocketAddress(path: path).connect(fd)
        } catch {
            let message = "\(error)"
            Glibc.close(fd)
            throw Failure("connect \(path): \(message)")
        }
    }

    /// Takes over an already connected socket (closed at deinit), e.g. one
    /// connected by a helper running as another user and passed back.
    public init(adopting fd: Int32) {
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    /// Connects, retrying while the daemon is still starting, up to `timeout` seconds.
    public static func connect(path: String, timeout: Double = 10) throws -> SocketClient {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            do {
                return try SocketClient(path: path)
            } catch {
                if Date() > deadline { throw error }
                var request = timespec(tv_sec: 0, tv_nsec: 20_000_000)
                nanosleep(&request, nil)
            }
        }
    }

    public func sendRaw(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure("send: \(String(cString: strerror(errno)))")
            }
            offset += count
        }
    }

    public func send(line: String) throws {
        try sendRaw(Array((line + "\n").utf8))
    }

    /// Sends `{"id":N,"op":op,...arguments}` and returns the id used.
    @discardableResult
    public func send(op: String, _ arguments: [String: Any] = [:]) throws -> Int {
        let id = nextID
        nextID += 1
        var object = arguments
        object["id"] = id
        object["op"] = op
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        try send(line: String(decoding: data, as: UTF8.self))
        return id
    }

    /// The next line, or nil at end of file; throws on timeout.
    public func readLine(timeout: Double = 10) throws -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                transcript.append(line)
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw Failure("timed out after \(timeout) s waiting for a line") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(remaining, 3600) * 1000) + 1)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return nil }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                if errno == ECONNRESET { return nil }
                throw Failure("recv: \(String(cString: strerror(errno)))")
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// The next message as a JSON object; throws at end of file or on timeout.
    public func readMessage(timeout: Double = 10) throws -> [String: Any] {
        guard let line = try readLine(timeout: timeout) else { throw Failure("connection closed") }
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw Failure("not a JSON object: \(line)")
        }
        return object
    }

    /// Reads until a message matches, returning it; the skipped ones are passed to `skipped`.
    public func waitFor(
        timeout: Double = 10, skipped: (([String: Any]) -> Void)? = nil, _ match: ([String: Any]) -> Bool
    ) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw Failure("timed out after \(timeout) s waiting for a matching message") }
            let message = try readMessage(timeout: remaining)
            if match(message) { return message }
            skipped?(message)
        }
    }

    /// Sends a request and waits for its reply (events before it are passed to `skipped`).
    public func request(
        _ op: String, _ arguments: [String: Any] = [:], timeout: Double = 10,
        skipped: (([String: Any]) -> Void)? = nil
    ) throws -> [String: Any] {
        let id = try send(op: op, arguments)
        return try waitFor(timeout: timeout, skipped: skipped) { ($0["id"] as? Int) == id && $0["ok"] != nil }
    }

    /// Half-closes the write side (the daemon sees end of file).
    public func shutdownWrite() {
        shutdown(fd, Int32(SHUT_WR))
    }
}
