import AklocCore
import AklocPosix
import AklocTestSupport
import Dispatch
import Glibc
import Testing

/// `StreamServer` on a real listening Unix socket. Running the process out
/// of descriptors would starve the tests running beside these, so the
/// failure is injected: `Flaky` is the real listener with accept failing
/// with EMFILE while the test says so; the connection stays in the backlog
/// and the listening socket stays readable, as with a real EMFILE.
@Suite struct StreamServerTests {
    final class Flaky: StreamListener, @unchecked Sendable {
        // @unchecked: touched on the server's queue, and by the test inside `queue.sync`.
        let real: UnixListeningSocket
        var failing = false
        var attempts = 0

        init(_ real: UnixListeningSocket) { self.real = real }

        var descriptor: FileDescriptor { real.descriptor }

        func accept() throws(SocketError) -> (UnixStreamSocket, UnixStreamSocket.Credentials)? {
            attempts += 1
            if failing { throw SocketError(.accept, path: nil, errno: EMFILE) }
            return try real.accept()
        }

        func close(then: (() -> Void)?) { real.close(then: then) }
    }

    /// A server on a queue of its own, its retry on virtual time.
    final class Harness: @unchecked Sendable {
        // @unchecked: the state is touched on `queue` only (tests go through `queue.sync`).
        let files = ScratchFiles()
        let queue = DispatchQueue(label: "stream-server-test")
        let listener: Flaky
        var server: StreamServer<Flaky>!
        var accepted: [(BufferedStream, UnixStreamSocket.Credentials)] = []
        var failures: [SocketError] = []
        let clock = ManualClock()
        let arrival = DispatchSemaphore(value: 0)
        let failure = DispatchSemaphore(value: 0)
        let path: String

        init() throws {
            path = files.file("s.sock")
            listener = Flaky(try UnixListeningSocket.listen(path: path, mode: 0o600))
            queue.sync {
                server = StreamServer(
                    listener: listener, queue: queue, clock: clock,
                    acceptFailed: { [weak self] error in
                        self?.failures.append(error)
                        self?.failure.signal()
                    },
                    accepted: { [weak self] stream, credentials in
                        self?.accepted.append((stream, credentials))
                        self?.arrival.signal()
                    })
                server.start()
            }
        }

        deinit {
            let server = server!
            let accepted = accepted.map(\.0)
            queue.sync {
                server.stop()
                for var stream in accepted { stream.close() }
            }
        }

        func connect() throws -> UnixStreamSocket {
            try UnixStreamSocket.connect(path: path, nonBlocking: false)
        }

        func waitForArrival() -> Bool { arrival.wait(timeout: .now() + 10) == .success }
        func waitForFailure() -> Bool { failure.wait(timeout: .now() + 10) == .success }
    }

    @Test func acceptsEachConnectionAsABufferedStreamWithItsPeer() throws {
        let harness = try Harness()
        let client = try harness.connect()
        defer { client.close() }
        #expect(harness.waitForArrival())
        let stream = try #require(harness.queue.sync { harness.accepted.first?.0 })
        harness.queue.sync {
            #expect(harness.accepted[0].1.pid == getpid())
            var stream = stream
            #expect(stream.send(Array("hi\n".utf8), waitingOn: harness.queue, {}) == .written)
        }
        try client.setReceiveTimeout(seconds: 10)
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(try buffer.withUnsafeMutableBytes { try client.receive(into: $0, blocking: true) } == .bytes(3))
        harness.queue.sync { harness.server.stop() }
        // The file it bound goes with it.
        #expect(access(harness.path, F_OK) == -1)
    }

    @Test func aFailedAcceptPausesUntilTheRetryWithoutSpinning() throws {
        let harness = try Harness()
        harness.queue.sync { harness.listener.failing = true }
        let waiting = try harness.connect()
        defer { waiting.close() }
        // The failure is reported once, and one retry is scheduled.
        #expect(harness.waitForFailure())
        let attempts = harness.queue.sync { harness.listener.attempts }
        harness.queue.sync {
            #expect(harness.server.isSuspended)
            #expect(harness.failures.count == 1 && harness.failures.first?.errno == EMFILE)
            #expect(harness.clock.armedDeadlines == [harness.clock.now().advanced(bySeconds: 1)])
        }
        // Paused: the pending connection wakes nobody. A second connection
        // arrives, and a round trip through the queue shows no attempt made.
        let second = try harness.connect()
        defer { second.close() }
        harness.queue.sync {}
        harness.queue.sync {
            #expect(harness.listener.attempts == attempts, "accept tried while paused")
            #expect(harness.accepted.isEmpty)
        }
        // Still paused just before the second; then the retry comes (the
        // descriptors are back): both get in.
        harness.queue.sync {
            harness.listener.failing = false
            harness.clock.advance(by: 0.9)
            #expect(harness.server.isSuspended)
            harness.clock.advance(by: 0.1)
            #expect(!harness.server.isSuspended)
        }
        #expect(harness.waitForArrival() && harness.waitForArrival())
        harness.queue.sync { #expect(harness.accepted.count == 2 && harness.failures.count == 1) }
    }

    @Test func closingAnAcceptedStreamResumesAtOnce() throws {
        let harness = try Harness()
        let first = try harness.connect()
        defer { first.close() }
        #expect(harness.waitForArrival())
        harness.queue.sync { harness.listener.failing = true }
        let waiting = try harness.connect()
        defer { waiting.close() }
        #expect(harness.waitForFailure())
        harness.queue.sync {
            #expect(harness.server.isSuspended)
            harness.listener.failing = false
            // A client leaves: its descriptor is free, accepting goes on.
            harness.accepted[0].0.close()
        }
        #expect(harness.waitForArrival())
        harness.queue.sync {
            #expect(!harness.server.isSuspended)
            #expect(harness.accepted.count == 2)
            // The retry of the pause that ended is disarmed.
            #expect(harness.clock.armedDeadlines.isEmpty)
        }
    }
}
