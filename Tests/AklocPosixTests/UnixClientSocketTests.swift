import AklocPosix
import AklocTestSupport
import Foundation
import Glibc
import Testing

/// The client end of a Unix socket against a listener made here.
@Suite struct UnixClientSocketTests {
    @Test func missingAndOverlongPathsAreTypedErrors() {
        #expect(throws: Errno.noSuchFile) { try UnixClientSocket.connect(path: "/nonexistent/akloc.sock") }
        #expect(throws: Errno(rawValue: ENAMETOOLONG)) {
            try UnixClientSocket.connect(path: "/" + String(repeating: "x", count: 200))
        }
        #expect(throws: Errno(rawValue: ENAMETOOLONG)) { try UnixClientSocket.connect(path: "") }
    }

    @Test func sendsReceivesWouldBlockAndSeesTheEnd() throws {
        let directory = TestSockets.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/s.sock"
        let listener = TestSockets.unixSocket(type: Int32(SOCK_STREAM.rawValue), path: path, listen: 1)
        defer { close(listener) }

        let descriptor = try UnixClientSocket.connect(path: path)
        defer { descriptor.close() }
        let fd = descriptor.rawValue
        #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
        let peer = accept(listener, nil, nil)
        #expect(peer >= 0)

        var buffer = [UInt8](repeating: 0, count: 16)
        let nothing = try buffer.withUnsafeMutableBytes { try UnixClientSocket.receive(fd, into: $0) }
        #expect(nothing == .wouldBlock)
        let sent = try Array("hi\n".utf8).withUnsafeBytes { try UnixClientSocket.send(fd, $0) }
        #expect(sent == 3)
        var echo = [UInt8](repeating: 0, count: 3)
        #expect(recv(peer, &echo, 3, 0) == 3 && echo == Array("hi\n".utf8))
        #expect(Glibc.send(peer, "ok", 2, 0) == 2)
        close(peer)
        let got = try buffer.withUnsafeMutableBytes { try UnixClientSocket.receive(fd, into: $0) }
        #expect(got == .bytes(2) && buffer.prefix(2) == ArraySlice("ok".utf8))
        let end = try buffer.withUnsafeMutableBytes { try UnixClientSocket.receive(fd, into: $0) }
        #expect(end == .endOfFile)
        // Writing to a closed peer is EPIPE, never SIGPIPE.
        #expect(throws: Errno(rawValue: EPIPE)) {
            try Array("x".utf8).withUnsafeBytes { try UnixClientSocket.send(fd, $0) }
        }

        let blocking = try UnixClientSocket.connect(path: path, nonBlocking: false)
        defer { blocking.close() }
        #expect(fcntl(blocking.rawValue, F_GETFL) & O_NONBLOCK == 0)
    }
}
