import AklocCore
import AklocTestSupport
import Glibc
import Testing

@testable import AklocSystemd

@Suite struct ListenFDsTests {
    private func error(_ body: () throws -> Void) -> ListenFDsError? {
        do { try body() } catch { return error as? ListenFDsError }
        return nil
    }

    @Test func acceptsAListeningUnixStreamSocket() throws {
        let directory = TestSockets.temporaryDirectory()
        defer { rmdir(directory) }
        let fd = TestSockets.unixSocket(type: Int32(SOCK_STREAM.rawValue), path: directory + "/s", listen: 4)
        defer {
            close(fd)
            unlink(directory + "/s")
        }
        #expect(try ListenFDs.unixStreamListener(from: [fd]) == fd)
        #expect(try ListenFDs.unixStreamListener(from: []) == nil)
    }

    @Test func rejectsMoreThanOneDescriptor() {
        let failure = error { _ = try ListenFDs.unixStreamListener(from: [3, 4]) }
        #expect(failure?.code == .tooManyDescriptors)
        #expect(failure?.message.contains("got 2") == true)
    }

    @Test func rejectsDatagramSocket() {
        let fd = TestSockets.unixSocket(type: Int32(SOCK_DGRAM.rawValue), path: nil)
        defer { close(fd) }
        #expect(error { try ListenFDs.checkUnixStreamListener(fd) }?.code == .notUnixStreamListener)
    }

    @Test func rejectsStreamSocketThatIsNotListening() {
        let fd = TestSockets.unixSocket(type: Int32(SOCK_STREAM.rawValue), path: nil)
        defer { close(fd) }
        #expect(error { try ListenFDs.checkUnixStreamListener(fd) }?.code == .notUnixStreamListener)
    }

    @Test func rejectsAPipe() {
        let (readEnd, writeEnd) = TestSockets.pipe()
        defer {
            close(readEnd)
            close(writeEnd)
        }
        #expect(error { try ListenFDs.checkUnixStreamListener(readEnd) }?.code == .notUnixStreamListener)
    }

    @Test func rejectsAClosedDescriptor() {
        let (readEnd, writeEnd) = TestSockets.pipe()
        close(readEnd)
        close(writeEnd)
        let failure = error { try ListenFDs.checkUnixStreamListener(readEnd) }
        #expect(failure?.code == .badDescriptor)
        #expect(failure?.message.contains("EBADF") == true)
    }
}
