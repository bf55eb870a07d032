import AklocPosix
import Dispatch
import Glibc
import Testing

/// FileDescriptor's watches on real sockets (issue 18): events arrive on the
/// queue through its EventPoller, a peer's hang-up is readiness, and nothing
/// reaches a watch once its descriptor is closed, even when `accept` (here
/// `socketpair`) hands the number out again at once.
@Suite struct FileDescriptorTests {
    /// A connected pair; ours non-blocking and owned by a FileDescriptor.
    private static func pair() throws -> (FileDescriptor, Int32) {
        var fds: [Int32] = [-1, -1]
        try Syscall.retryingOnEINTR { socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        return (FileDescriptor(adopting: fds[0]), fds[1])
    }

    /// Reads whatever is there.
    private static func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 256)
        while recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 {}
    }

    @Test func readableWatchSeesDataThenThePeerHangingUp() throws {
        let queue = DispatchQueue(label: "fd-test")
        let (ours, peer) = try Self.pair()
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var seen: [String] = []
        queue.sync {
            _ = ours.watch(.readable, on: queue) {
                var buffer = [UInt8](repeating: 0, count: 256)
                let count = recv(ours.rawValue, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if count > 0 { seen.append(String(decoding: buffer[..<count], as: UTF8.self)) }
                if count == 0 {
                    seen.append("eof")
                    ours.close()
                    done.signal()
                }
            }
        }
        _ = send(peer, "hi", 2, Int32(MSG_NOSIGNAL))
        close(peer)
        #expect(done.wait(timeout: .now() + 10) == .success)
        queue.sync {
            #expect(seen == ["hi", "eof"])
            #expect(ours.isClosed)
        }
    }

    @Test func closedDescriptorsWatchIsNeverCalledEvenWhenItsNumberIsReused() throws {
        let queue = DispatchQueue(label: "fd-test-reuse")
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var oldCalls = 0
        nonisolated(unsafe) var newCalls = 0
        nonisolated(unsafe) var peers: [Int32] = []
        try queue.sync {
            let (old, oldPeer) = try Self.pair()
            peers.append(oldPeer)
            _ = old.watch(.readable, on: queue) { oldCalls += 1 }
            // Readable (level-triggered) from now on, but closed before the
            // queue runs again: the event must not reach the old watch.
            _ = send(oldPeer, "x", 1, Int32(MSG_NOSIGNAL))
            old.close()
            let (fresh, freshPeer) = try Self.pair()
            peers.append(freshPeer)
            _ = fresh.watch(.readable, on: queue) {
                newCalls += 1
                Self.drain(fresh.rawValue)
                fresh.close()
                done.signal()
            }
            _ = send(freshPeer, "y", 1, Int32(MSG_NOSIGNAL))
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        queue.sync {
            #expect(oldCalls == 0)
            #expect(newCalls == 1)
        }
        for peer in peers { close(peer) }
    }

    @Test func suspendedWatchWaitsForResume() throws {
        let queue = DispatchQueue(label: "fd-test-suspend")
        let (ours, peer) = try Self.pair()
        defer { close(peer) }
        let first = DispatchSemaphore(value: 0)
        let second = DispatchSemaphore(value: 0)
        let readable = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var writableCalls = 0
        nonisolated(unsafe) var writeWatch: FileDescriptor.Watch?
        queue.sync {
            // A socket with room is always writable: only suspension stops the calls.
            writeWatch = ours.watch(.writable, on: queue) {
                writableCalls += 1
                writeWatch?.suspend()
                (writableCalls == 1 ? first : second).signal()
            }
            _ = ours.watch(.readable, on: queue) {
                Self.drain(ours.rawValue)
                readable.signal()
            }
        }
        #expect(first.wait(timeout: .now() + 10) == .success)
        // A read event goes through the same poller after the suspension:
        // had the write watch still been armed it would have run again by now.
        _ = send(peer, "z", 1, Int32(MSG_NOSIGNAL))
        #expect(readable.wait(timeout: .now() + 10) == .success)
        queue.sync {
            #expect(writableCalls == 1)
            writeWatch?.resume()
        }
        #expect(second.wait(timeout: .now() + 10) == .success)
        queue.sync {
            #expect(writableCalls == 2)
            ours.close()
        }
    }
}
