import AklocPosix
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A test-owned `NOTIFY_SOCKET`: an `AF_UNIX` `SOCK_DGRAM` socket bound in a
/// temporary directory, read with poll(2) timeouts, so a test sees exactly
/// what a daemon tells systemd (sd_notify(3)). Closed and removed at deinit.
public final class NotifySocket: @unchecked Sendable {
    // @unchecked: used from one test at a time; `received` is only touched by `receive`.

    /// One datagram: `KEY=value` lines, with when it was read.
    public struct Message: CustomStringConvertible, Sendable {
        public var text: String
        public var receivedAt: ContinuousClock.Instant

        /// The assignments, in order (a datagram may carry several).
        public var assignments: [(key: String, value: String)] {
            text.split(separator: "\n").map { line in
                guard let equals = line.firstIndex(of: "=") else { return (String(line), "") }
                return (String(line[..<equals]), String(line[line.index(after: equals)...]))
            }
        }

        public subscript(key: String) -> String? { assignments.last { $0.key == key }?.value }

        public var description: String { text.replacingOccurrences(of: "\n", with: "\\n") }
    }

    public let path: String
    private let directory: URL
    private let fd: Int32
    /// Every datagram read so far, in order.
    public private(set) var received: [Message] = []

    public init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-notify-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("notify.sock").path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketClient.Failure("socket: \(String(cString: strerror(errno)))") }
        do {
            try UnixSocketAddress(path: path).bind(fd)
        } catch {
            let message = "\(error)"
            close(fd)
            try? FileManager.default.removeItem(at: directory)
            throw SocketClient.Failure("bind \(path): \(message)")
        }
    }

    deinit {
        close(fd)
        try? FileManager.default.removeItem(at: directory)
    }

    /// The next datagram, or nil when none came within `timeout` seconds.
    public func receive(timeout: Double) -> Message? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(remaining, 3600) * 1000) + 1)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 { continue }
            let message = Message(
                text: String(decoding: buffer[..<count], as: UTF8.self), receivedAt: ContinuousClock.now)
            received.append(message)
            return message
        }
    }

    /// Reads every datagram already queued, without waiting; returns them.
    @discardableResult
    public func drain() -> [Message] {
        var drained: [Message] = []
        while true {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 0) > 0, let message = receive(timeout: 1) else { return drained }
            drained.append(message)
        }
    }

    /// Reads datagrams until one matches, within `timeout` seconds.
    public func waitFor(timeout: Double = 10, _ match: (Message) -> Bool) throws -> Message {
        let deadline = Date().addingTimeInterval(timeout)
        while let message = receive(timeout: deadline.timeIntervalSinceNow) {
            if match(message) { return message }
        }
        throw SocketClient.Failure(
            "no matching sd_notify datagram within \(timeout) s; got: \(received.map(\.description))")
    }

    /// Reads datagrams until one sets `key` (to `value`, if given).
    @discardableResult
    public func waitFor(_ key: String, _ value: String? = nil, timeout: Double = 10) throws -> Message {
        try waitFor(timeout: timeout) { message in
            message.assignments.contains { $0.key == key && (value == nil || $0.value == value) }
        }
    }
}
