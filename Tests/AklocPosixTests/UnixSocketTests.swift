import AklocPosix
import AklocTestSupport
import Foundation
import Glibc
import Testing

/// `UnixSocketAddress`, `UnixListeningSocket` and `UnixStreamSocket` against
/// each other and against raw sockets made here.
@Suite struct UnixSocketTests {
    @Test func addressesCheckTheirLimits() throws {
        #expect(UnixSocketAddress.maxPathLength == 107)
        let longest = "/" + String(repeating: "x", count: 106)
        #expect(try UnixSocketAddress(path: longest).path == longest)
        let tooLong = longest + "y"
        let error = #expect(throws: UnixSocketAddress.InvalidAddress.self) { try UnixSocketAddress(path: tooLong) }
        #expect(error?.reason == .tooLong(108))
        #expect(error?.errno == .nameTooLong)
        #expect(error?.description.contains("at most 107 bytes, this one has 108") == true)
        #expect(throws: UnixSocketAddress.InvalidAddress.self) { try UnixSocketAddress(path: "") }
        #expect(throws: UnixSocketAddress.InvalidAddress.self) { try UnixSocketAddress(path: "/a\u{0}b") }
        // Multi-byte characters count as bytes, as the kernel counts them.
        #expect(throws: UnixSocketAddress.InvalidAddress.self) {
            try UnixSocketAddress(path: "/" + String(repeating: "é", count: 54))
        }
        #expect(try UnixSocketAddress(parsing: "@akloc-test").name == .abstract("akloc-test"))
        #expect(try UnixSocketAddress(parsing: "/run/x").description == "/run/x")
        #expect(throws: UnixSocketAddress.InvalidAddress.self) { try UnixSocketAddress(parsing: "@") }
    }

    @Test func missingAndOverlongPathsAreTypedErrors() {
        let missing = #expect(throws: SocketError.self) {
            try UnixStreamSocket.connect(path: "/nonexistent/akloc.sock")
        }
        #expect(missing?.code == .connect && missing?.error == .noSuchFile)
        let long = #expect(throws: SocketError.self) {
            try UnixStreamSocket.connect(path: "/" + String(repeating: "x", count: 200))
        }
        #expect(long?.code == .invalidAddress && long?.error == .nameTooLong)
        #expect(long?.description.hasPrefix("a Unix socket path holds at most 107 bytes") == true)
    }

    @Test func listensAcceptsSendsReceivesAndSeesTheEnd() throws {
        let directory = TestSockets.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/s.sock"
        let listener = try UnixListeningSocket.listen(path: path, mode: 0o600)
        #expect(FileSystem.isWritable(path))
        var info = try #require(try FileSystem.status(path))
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(try listener.accept() == nil, "nothing waiting")

        let client = try UnixStreamSocket.connect(path: path)
        defer { client.close() }
        #expect(fcntl(client.fd, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(client.fd, F_GETFD) & FD_CLOEXEC != 0)
        let (peer, credentials) = try #require(try listener.accept())
        #expect(credentials == UnixStreamSocket.Credentials(pid: getpid(), uid: getuid(), gid: getgid()))
        #expect(fcntl(peer.fd, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(peer.fd, F_GETFD) & FD_CLOEXEC != 0)

        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(try buffer.withUnsafeMutableBytes { try client.receive(into: $0) } == .wouldBlock)
        #expect(try Array("hi\n".utf8).withUnsafeBytes { try client.send($0) } == 3)
        #expect(try buffer.withUnsafeMutableBytes { try peer.receive(into: $0) } == .bytes(3))
        #expect(buffer.prefix(3) == ArraySlice("hi\n".utf8))
        try peer.sendAll(Array("ok".utf8))
        peer.close()
        #expect(try buffer.withUnsafeMutableBytes { try client.receive(into: $0) } == .bytes(2))
        #expect(buffer.prefix(2) == ArraySlice("ok".utf8))
        #expect(try buffer.withUnsafeMutableBytes { try client.receive(into: $0) } == .endOfFile)
        // Writing to a closed peer is EPIPE, never SIGPIPE.
        let failed = #expect(throws: SocketError.self) { try Array("x".utf8).withUnsafeBytes { try client.send($0) } }
        #expect(failed?.isPeerGone == true)

        // A blocking client's receive waits up to its timeout, then reports it.
        let blocking = try UnixStreamSocket.connect(path: path, nonBlocking: false)
        defer { blocking.close() }
        #expect(fcntl(blocking.fd, F_GETFL) & O_NONBLOCK == 0)
        try blocking.setReceiveTimeout(seconds: 0.05)
        #expect(try buffer.withUnsafeMutableBytes { try blocking.receive(into: $0, blocking: true) } == .wouldBlock)

        // A second daemon may not steal a live socket; the file goes with the listener.
        let second = #expect(throws: SocketError.self) { try UnixListeningSocket.listen(path: path, mode: 0o600) }
        #expect(second?.code == .addressInUse)
        listener.close()
        info = stat()
        #expect(stat(path, &info) == -1 && errno == ENOENT)
    }

    @Test func aStaleSocketFileIsReplaced() throws {
        let directory = TestSockets.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/stale.sock"
        // Bound, never listened on, closed: what a crashed daemon leaves.
        let stale = TestSockets.unixSocket(type: Int32(SOCK_STREAM.rawValue), path: path)
        close(stale)
        let listener = try UnixListeningSocket.listen(path: path, mode: 0o666)
        defer { listener.close() }
        let client = try UnixStreamSocket.connect(path: path)
        defer { client.close() }
        #expect(try listener.accept() != nil)
    }

    @Test func adoptsAnActivatedListenerAndLeavesItsFile() throws {
        let directory = TestSockets.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/activated.sock"
        let fd = TestSockets.unixSocket(type: Int32(SOCK_STREAM.rawValue), path: path, listen: 8)
        #expect(fcntl(fd, F_GETFL) & O_NONBLOCK == 0)
        let listener = try UnixListeningSocket(activated: fd)
        #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
        #expect(try listener.accept() == nil)
        listener.close()
        #expect(try FileSystem.status(path) != nil, "systemd's socket file is systemd's")
    }

    @Test func abstractNamesConnectWithoutAFile() throws {
        let address = try UnixSocketAddress(abstractName: "akloc-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let listener = try UnixListeningSocket.listen(at: address, mode: 0o600)
        defer { listener.close() }
        let client = try UnixStreamSocket.connect(to: address)
        defer { client.close() }
        #expect(try listener.accept() != nil)
    }
}
