import AklocPosix
import Glibc
import Testing

@testable import AklocDaemon

/// A client whose write fails because it already closed its end left on its
/// own: that is a disconnect, not a drop (`clientsDropped` counts the daemon's
/// decisions, and no warning is logged for a client that simply went away).
@Suite struct DepartureTests {
    @Test(arguments: [EPIPE, ECONNRESET])
    func aPeerThatClosedIsNotDropped(errno: Int32) {
        guard case .closedByPeer = ClientServer.departure(after: SocketError(.write, path: nil, errno: errno)) else {
            Issue.record("errno \(errno) counted as a drop")
            return
        }
    }

    @Test func otherWriteFailuresAreDrops() {
        guard case .dropped(let reason) = ClientServer.departure(after: SocketError(.write, path: nil, errno: EIO))
        else {
            Issue.record("EIO is not a drop")
            return
        }
        #expect(reason.contains("write failed"))
    }
}
