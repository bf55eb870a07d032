import AklocCore
import AklocPosix
import AklocTestSupport
import Dispatch
import Glibc
import Testing

@testable import AklocHTTP

/// The HTTP server on real TCP sockets over loopback, without a browser,
/// on a hand-set clock. The test steps the server itself (`poll`, inside
/// `queue.sync`): on loopback a connect is in the listen backlog, and sent
/// bytes are in the peer's buffer, when the call returns, so each step sees
/// what the client did. Responses are read with blocking receives whose
/// timeouts only keep a broken server from hanging the suite.
@Suite struct HTTPServerTests {
    final class Harness: @unchecked Sendable {
        // @unchecked: `clock` and `server` are touched on `queue` only.
        let queue = DispatchQueue(label: "http-server-test")
        let clock = ManualClock()
        var server: HTTPServer!
        let port: UInt16

        init(limits: HTTPServer.Limits = HTTPServer.Limits()) throws {
            let listener = try TCPListener.listen(on: .init(host: "127.0.0.1", port: 0))
            port = try listener.boundPort()
            queue.sync {
                server = HTTPServer(
                    listener: listener, queue: queue, clock: clock, limits: limits,
                    headers: [HTTPResponse.Header("X-Test", "yes")], router: Self.route,
                    initialEvents: { ServerSentEvent.bytes(event: "hello", data: Array("{}".utf8)) }
                )
                server.start()
            }
        }

        deinit {
            let server = server!
            queue.sync { server.stop() }
        }

        static func route(_ head: HTTPRequestHead) -> HTTPServer.Route {
            switch head.path {
            case "/": .response(HTTPResponse(status: 200, contentType: "text/plain", body: Array("page".utf8)))
            case "/events": .eventStream
            case "/health.json": .health
            case "/later":
                .deferred { complete in
                    DispatchQueue.global().async {
                        complete(HTTPResponse(status: 200, contentType: "text/plain", body: Array("later".utf8)))
                    }
                }
            default: .response(.error(404, "no such page"))
            }
        }

        /// Accepts and reads what the clients did so far.
        func poll() { queue.sync { server.poll() } }

        /// Moves the clock, running the server's timers (its sweep) as their times pass.
        func advance(by seconds: Double) {
            queue.sync { clock.advance(by: seconds) }
        }

        func counts() -> (connections: Int, streams: Int, stalled: Int) {
            queue.sync { (server.connectionCount, server.streamCount, server.stalledStreamCount) }
        }

        func connect(receiveBuffer: Int32? = nil) throws -> Client {
            let client = try Client(port: port, receiveBuffer: receiveBuffer)
            poll()
            return client
        }

        /// A tab with its event stream open, its head and first events read.
        func openStream(receiveBuffer: Int32? = nil) throws -> Client {
            let tab = try connect(receiveBuffer: receiveBuffer)
            try tab.send("GET /events HTTP/1.1\r\n\r\n")
            poll()
            _ = try tab.read(until: "event: hello\ndata: {}\n\n")
            return tab
        }

        /// Broadcasts 16 KiB events to a tab that does not read, until
        /// `done` says so (at most 1000); how many it took.
        func broadcast(until done: ((connections: Int, streams: Int, stalled: Int)) -> Bool) -> Int {
            let event = ServerSentEvent.bytes(event: "location", data: [UInt8](repeating: 0x31, count: 16_384))
            var broadcasts = 0
            while !done(counts()), broadcasts < 1000 {
                server.broadcast(event)
                broadcasts += 1
            }
            return broadcasts
        }
    }

    /// A browser's end: a blocking TCP socket.
    final class Client {
        let socket: UnixStreamSocket
        private(set) var received: [UInt8] = []

        init(port: UInt16, receiveBuffer: Int32?) throws {
            let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            try #require(fd >= 0)
            socket = UnixStreamSocket(FileDescriptor(adopting: fd))
            if var size = receiveBuffer {
                setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            try #require(result == 0, "connect: \(Errno.current)")
            try socket.setReceiveTimeout(seconds: 10)
        }

        deinit { socket.close() }

        func send(_ text: String) throws { try socket.sendAll(Array(text.utf8)) }

        /// Reads until the server closes; everything it sent.
        func readToEnd() throws -> String {
            while try readSome() {}
            return String(decoding: received, as: UTF8.self)
        }

        /// Reads until what arrived contains `text` (or the server closed).
        func read(until text: String) throws -> String {
            while !String(decoding: received, as: UTF8.self).contains(text), try readSome() {}
            return String(decoding: received, as: UTF8.self)
        }

        /// One blocking read; false at the end (or the receive timeout).
        private func readSome() throws -> Bool {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let result = try buffer.withUnsafeMutableBytes { try socket.receive(into: $0, blocking: true) }
            guard case .bytes(let count) = result else { return false }
            received += buffer[..<count]
            return true
        }

        func close() { socket.close() }
    }

    @Test func aRequestIsAnsweredWithTheCommonHeadersAndClosed() throws {
        let harness = try Harness()
        let client = try harness.connect()
        try client.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        harness.poll()
        let response = try client.readToEnd()
        #expect(response.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(response.contains("\r\nX-Test: yes\r\n") && response.contains("\r\nContent-Length: 4\r\n"))
        #expect(response.hasSuffix("\r\n\r\npage"))
        #expect(harness.counts().connections == 0)
    }

    @Test func requestHeadLimitsAreAnsweredWithTheirStatus() throws {
        let harness = try Harness()
        let cases: [(String, String)] = [
            ("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: HTTPRequestHead.maxBytes), "431"),
            ("GET / HTTP/1.1\r\n" + String(repeating: "X: y\r\n", count: HTTPRequestHead.maxHeaders + 2), "431"),
            ("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "405"),
            ("GET / HTTP/2.0\r\n\r\n", "505"),
            ("\u{16}\u{03}\u{01}\u{02}\r\n\r\n", "400"),
        ]
        for (request, status) in cases {
            let client = try harness.connect()
            try client.send(request)
            // The server reads 4 KiB per wake-up: step until all is in.
            for _ in 0..<(request.utf8.count / 4096 + 1) { harness.poll() }
            let response = try client.readToEnd()
            #expect(response.hasPrefix("HTTP/1.1 \(status) "), "\(request.prefix(20).debugDescription): \(response)")
        }
        #expect(harness.counts().connections == 0)
    }

    @Test func aPartialRequestWaitsForTheRestWithinTheHeadTimeout() throws {
        let harness = try Harness()
        let client = try harness.connect()
        for piece in ["GET / H", "TTP/1.1\r\nHo", "st: 127.0.0.1\r\n", "\r"] {
            try client.send(piece)
            harness.poll()
            harness.advance(by: 2)
        }
        #expect(harness.counts().connections == 1, "closed before the head timeout")
        try client.send("\n")
        harness.poll()
        #expect(try client.readToEnd().hasPrefix("HTTP/1.1 200 OK"))
    }

    @Test func aSlowRequestGets408AtTheHeadTimeout() throws {
        var limits = HTTPServer.Limits()
        limits.headTimeout = 5
        let harness = try Harness(limits: limits)
        let slow = try harness.connect()
        try slow.send("GET / HTTP/1.1\r\n")
        harness.poll()
        harness.advance(by: 4)
        #expect(harness.counts().connections == 1)
        harness.advance(by: 1)
        let response = try slow.readToEnd()
        #expect(response.hasPrefix("HTTP/1.1 408 Request Timeout"))
        #expect(response.contains("took longer than 5 s"))
        #expect(harness.counts().connections == 0)
    }

    @Test func pastTheConnectionLimitA503() throws {
        var limits = HTTPServer.Limits()
        limits.maxConnections = 2
        let harness = try Harness(limits: limits)
        let first = try harness.connect()
        let second = try harness.connect()
        #expect(harness.counts().connections == 2)
        let third = try harness.connect()
        #expect(try third.readToEnd().hasPrefix("HTTP/1.1 503 Service Unavailable"))
        // The two it holds are served as before, and one leaving makes room.
        try first.send("GET / HTTP/1.1\r\n\r\n")
        harness.poll()
        #expect(try first.readToEnd().hasPrefix("HTTP/1.1 200"))
        let fourth = try harness.connect()
        try fourth.send("GET / HTTP/1.1\r\n\r\n")
        harness.poll()
        #expect(try fourth.readToEnd().hasPrefix("HTTP/1.1 200"))
        second.close()
    }

    @Test func aStreamGetsItsHeadInitialEventsBroadcastsAndKeepAlives() throws {
        let harness = try Harness()
        let tab = try harness.openStream()
        let head = try tab.read(until: "event: hello\ndata: {}\n\n")
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"))
        #expect(harness.counts().streams == 1)
        harness.server.broadcast(ServerSentEvent.bytes(event: "location", data: Array("{\"x\":1}".utf8)))
        #expect(try tab.read(until: "event: location\ndata: {\"x\":1}\n\n").hasSuffix("\n\n"))
        harness.advance(by: 15)
        #expect(try tab.read(until: ": keep-alive\n\n").hasSuffix(": keep-alive\n\n"))
    }

    @Test func aClosedTabFreesItsStream() throws {
        let harness = try Harness()
        let tab = try harness.openStream()
        #expect(harness.counts() == (1, 1, 0))
        tab.close()
        harness.poll()
        #expect(harness.counts() == (0, 0, 0))
    }

    @Test func aStalledReaderIsDroppedAfterTheWriteTimeout() throws {
        var limits = HTTPServer.Limits()
        limits.keepAliveInterval = 1000
        let harness = try Harness(limits: limits)
        let tab = try harness.openStream(receiveBuffer: 4096)
        // The tab stops reading: events fill the sockets, then wait queued.
        let broadcasts = harness.broadcast { $0.stalled > 0 }
        try #require(harness.counts().stalled == 1, "never stalled after \(broadcasts) events")
        harness.advance(by: 29)
        #expect(harness.counts().streams == 1)
        harness.advance(by: 1)
        #expect(harness.counts() == (0, 0, 0))
        // The tab reads what had reached it, then the end.
        #expect(try tab.readToEnd().contains("event: location"))
    }

    @Test func aReaderTooFarBehindIsDroppedAtOnce() throws {
        var limits = HTTPServer.Limits()
        limits.maxQueuedEventBytes = 64 * 1024
        let harness = try Harness(limits: limits)
        let tab = try harness.openStream(receiveBuffer: 4096)
        let broadcasts = harness.broadcast { $0.streams == 0 }
        #expect(harness.counts().streams == 0, "still streaming after \(broadcasts) events")
        tab.close()
    }

    @Test func healthAndDeferredAnswers() throws {
        let harness = try Harness()
        let tab = try harness.openStream()
        let health = try harness.connect()
        try health.send("GET /health.json HTTP/1.1\r\n\r\n")
        harness.poll()
        #expect(try health.readToEnd().hasSuffix("\r\n\r\n{\"connections\":2,\"streams\":1}"))
        tab.close()
        let later = try harness.connect()
        try later.send("GET /later HTTP/1.1\r\n\r\n")
        harness.poll()
        #expect(try later.readToEnd().hasSuffix("\r\n\r\nlater"))
    }
}
