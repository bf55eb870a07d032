import AklocCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback TCP server in the test process posing as gpsd: it greets each
/// connection with a VERSION line, waits for the client's ?WATCH, then plays
/// that connection's script (bytes and pauses), and finally closes the
/// connection or, for the last script, keeps it open until `stop()`.
public final class FakeGPSD: @unchecked Sendable {
    // @unchecked: `listener` is immutable after init; `accepted` is guarded by `lock`.

    public enum Step {
        case send([UInt8])
        case pause(Double)
        /// Blocks this connection's script until the test calls `release()`.
        case waitForRelease
    }

    public static let version =
        Array(
            #"{"class":"VERSION","release":"3.22","rev":"fake","proto_major":3,"proto_minor":14}"#.utf8) + [13, 10]

    public static func tpv(second: Int, lat: Double, lon: Double, device: String = "/dev/fake0") -> [UInt8] {
        let time = FixTime(secondsSince1970: 1_800_000_000 + Int64(second)).iso8601
        return Array(
            (#"{"class":"TPV","device":"\#(device)","mode":3,"time":"\#(time)","lat":\#(lat),"lon":\#(lon),"#
                + #""altHAE":10.5,"altMSL":8.25,"eph":4.5,"speed":1.25,"track":90.0}"# + "\r\n").utf8)
    }

    public let port: UInt16
    private let listener: Int32
    private let scripts: [[Step]]
    private let lock = NSLock()
    private var accepted = 0
    private var stopped = false
    private var openConnections: [Int32] = []
    private let done = DispatchGroup()
    private let textCondition = NSCondition()
    private var received: [UInt8] = []
    private var closed = 0
    private let releases = DispatchSemaphore(value: 0)

    public init(scripts: [[Step]], port requested: UInt16 = 0) throws {
        self.scripts = scripts
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var reuse: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = requested.bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = listener
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, generic, &length) == 0
            }
        }
        guard ok else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        port = UInt16(bigEndian: address.sin_port)
        done.enter()
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit {
        stop()
    }

    public var connectionCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return accepted
    }

    /// Everything clients sent, over all connections.
    public var clientText: String {
        textCondition.lock()
        defer { textCondition.unlock() }
        return String(decoding: received, as: UTF8.self)
    }

    /// Waits until the clients have sent `text`, bounded.
    public func waitForClientText(_ text: String, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        textCondition.lock()
        defer { textCondition.unlock() }
        while !String(decoding: received, as: UTF8.self).contains(text) {
            if !textCondition.wait(until: deadline) { return false }
        }
        return true
    }

    /// Lets a script waiting at `.waitForRelease` go on.
    public func release() {
        releases.signal()
    }

    /// Waits until the server has closed `count` connections, bounded.
    public func waitForClosedConnections(_ count: Int, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        textCondition.lock()
        defer { textCondition.unlock() }
        while closed < count {
            if !textCondition.wait(until: deadline) { return false }
        }
        return true
    }

    private func record(_ bytes: ArraySlice<UInt8>) {
        textCondition.lock()
        received += bytes
        textCondition.broadcast()
        textCondition.unlock()
    }

    /// Closes the listener and every connection, and waits for the server thread.
    public func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        let connections = openConnections
        lock.unlock()
        guard !wasStopped else { return }
        releases.signal()
        shutdown(listener, Int32(SHUT_RDWR))
        for fd in connections { shutdown(fd, Int32(SHUT_RDWR)) }
        _ = done.wait(timeout: .now() + 10)
        close(listener)
    }

    private func acceptLoop() {
        defer { done.leave() }
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 { return }
            lock.lock()
            let index = accepted
            accepted += 1
            let isStopped = stopped
            if !isStopped { openConnections.append(fd) }
            lock.unlock()
            if isStopped {
                close(fd)
                return
            }
            serve(fd, script: index < scripts.count ? scripts[index] : nil, isLast: index == scripts.count - 1)
        }
    }

    /// Connections are served one at a time, which is all a single client needs.
    private func serve(_ fd: Int32, script: [Step]?, isLast: Bool) {
        defer {
            lock.lock()
            openConnections.removeAll { $0 == fd }
            lock.unlock()
            close(fd)
            textCondition.lock()
            closed += 1
            textCondition.broadcast()
            textCondition.unlock()
        }
        guard write(fd, FakeGPSD.version), awaitWatch(fd) else { return }
        guard let script else {
            // Past the scripts: stay silent, keep the connection until stop().
            drainUntilClosed(fd)
            return
        }
        for step in script {
            switch step {
            case .send(let bytes): if !write(fd, bytes) { return }
            case .pause(let seconds): usleep(useconds_t(seconds * 1e6))
            case .waitForRelease: _ = releases.wait(timeout: .now() + 30)
            }
        }
        if isLast {
            drainUntilClosed(fd)
        } else {
            // Read what the client sent, so close() sends FIN rather than RST.
            drainAvailable(fd)
        }
    }

    private func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    /// Waits (bounded) for the client's ?WATCH so the script plays to a watcher.
    private func awaitWatch(_ fd: Int32) -> Bool {
        var seen: [UInt8] = []
        var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            guard poll(&pollFD, 1, 100) >= 0 else { return false }
            if pollFD.revents == 0 { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { return false }
            record(buffer[0..<count])
            seen += buffer[0..<count]
            if String(decoding: seen, as: UTF8.self).contains("?WATCH") { return true }
        }
        return false
    }

    private func drainAvailable(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count <= 0 { return }
            record(buffer[0..<count])
        }
    }

    private func drainUntilClosed(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { return }
            record(buffer[0..<count])
        }
    }
}

extension FakeGPSD {
    /// A bound, listening loopback socket that never accepts.
    public final class MuteListener {
        public let fd: Int32
        public let port: UInt16

        public init() throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let socketFD = fd
            let ok = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                    bind(socketFD, generic, length) == 0 && listen(socketFD, 16) == 0
                        && getsockname(socketFD, generic, &length) == 0
                }
            }
            guard ok else {
                Glibc.close(fd)
                throw POSIXError(.EADDRINUSE)
            }
            port = UInt16(bigEndian: address.sin_port)
        }

        public func close() {
            Glibc.close(fd)
        }
    }
}
