import AklocPosix
import Dispatch
import Glibc
import Testing

/// `BufferedStream` on real Unix sockets: the stream is the accepted end,
/// watched on a queue of its own; the test reads the peer end, a blocking
/// socket with a receive timeout, on its own thread. Semaphores that the
/// writable handler signals order the two; their timeouts only keep a
/// broken stream from hanging the suite.
@Suite struct BufferedStreamTests {
    /// A connected pair: `stream` (driven on `queue`) and `peer` (blocking, the test's).
    final class Pair: @unchecked Sendable {
        // @unchecked: `stream` and `events` are touched only on `queue`; the
        // test reads `events` after a semaphore its handler signalled.
        let files = ScratchFiles()
        let queue = DispatchQueue(label: "buffered-stream-test")
        var stream: BufferedStream
        let byteCap: Int
        var peer: UnixStreamSocket?
        /// What each writable wake-up's flush did, but for `blocked`.
        var events: [BufferedStream.Flush] = []
        let event = DispatchSemaphore(value: 0)
        /// How many times the write watch woke the owner.
        var wakeUps = 0

        init(byteCap: Int = .max) throws {
            self.byteCap = byteCap
            let path = files.file("s.sock")
            let listener = try UnixListeningSocket.listen(path: path, mode: 0o600)
            defer { listener.close() }
            let peer = try UnixStreamSocket.connect(path: path, nonBlocking: false)
            try peer.setReceiveTimeout(seconds: 10)
            self.peer = peer
            let (socket, _) = try #require(try listener.accept())
            stream = BufferedStream(socket)
        }

        deinit {
            queue.sync { stream.close() }
            peer?.close()
        }

        func send(_ bytes: [UInt8], key: Int? = nil) -> BufferedStream.Sent {
            queue.sync {
                stream.send(
                    bytes, coalescingKey: key, byteCap: byteCap, waitingOn: queue, { [weak self] in self?.writable() })
            }
        }

        /// The owner's writable handler.
        private func writable() {
            wakeUps += 1
            let result = stream.writable()
            guard result != .blocked else { return }
            events.append(result)
            event.signal()
        }

        /// Sends `chunk` until the socket takes no more and bytes are queued.
        func fill(_ chunk: [UInt8] = [UInt8](repeating: 0x2E, count: 65_536)) -> Int {
            var sent = 0
            while true {
                sent += chunk.count
                switch send(chunk) {
                case .written: continue
                case .queued: return sent
                case let other:
                    Issue.record("filling the socket: \(other)")
                    return sent
                }
            }
        }

        /// Reads exactly `count` bytes from the peer (blocking, up to its timeout).
        func receive(_ count: Int) throws -> [UInt8] {
            var result: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while result.count < count {
                let want = min(buffer.count, count - result.count)
                let received = try buffer.withUnsafeMutableBytes { raw in
                    try peer!.receive(into: UnsafeMutableRawBufferPointer(rebasing: raw[..<want]), blocking: true)
                }
                guard case .bytes(let got) = received else {
                    Issue.record("peer read \(received) after \(result.count) of \(count) bytes")
                    return result
                }
                result += buffer[..<got]
            }
            return result
        }

        func waitForEvent() -> BufferedStream.Flush? {
            guard event.wait(timeout: .now() + 10) == .success else { return nil }
            return queue.sync { events.removeFirst() }
        }
    }

    @Test func whatTheSocketTakesIsWrittenAtOnce() throws {
        let pair = try Pair()
        #expect(pair.send(Array("hello\n".utf8)) == .written)
        #expect(try pair.receive(6) == Array("hello\n".utf8))
        pair.queue.sync {
            #expect(pair.stream.isDrained && !pair.stream.isWaitingForWritable)
        }
    }

    @Test func theRestIsQueuedAndWrittenWhenThePeerReads() throws {
        let pair = try Pair()
        let filled = pair.fill()
        pair.queue.sync {
            #expect(pair.stream.queuedBytes > 0 && pair.stream.isWaitingForWritable)
        }
        // Queued behind: in order, after everything before it.
        #expect(pair.send(Array("end\n".utf8)) == .queued)
        let received = try pair.receive(filled + 4)
        #expect(received.suffix(4) == Array("end\n".utf8))
        #expect(received.dropLast(4).allSatisfy { $0 == 0x2E })
        #expect(pair.waitForEvent() == .drained)
        let wakeUps = pair.queue.sync {
            #expect(pair.stream.isDrained && pair.stream.queuedBytes == 0)
            #expect(!pair.stream.isWaitingForWritable, "a drained stream waits for nothing")
            return pair.wakeUps
        }
        // Its write watch is off: the writable socket wakes nobody.
        pair.queue.sync {}
        #expect(pair.queue.sync { pair.wakeUps } == wakeUps)
        // The fast path again once drained.
        #expect(pair.send(Array("x".utf8)) == .written)
    }

    @Test func aNewerMessageReplacesAnUnsentOneWithItsKey() throws {
        let pair = try Pair()
        let filled = pair.fill()
        #expect(pair.send(Array("fix1\n".utf8), key: 7) == .queued)
        #expect(pair.send(Array("reply\n".utf8)) == .queued)
        #expect(pair.send(Array("fix2\n".utf8), key: 7) == .coalesced)
        #expect(pair.send(Array("other\n".utf8), key: 8) == .queued)
        pair.queue.sync { #expect(pair.stream.coalescedCount == 1) }
        let tail = Array("reply\nfix2\nother\n".utf8)
        let received = try pair.receive(filled + tail.count)
        #expect(Array(received.suffix(tail.count)) == tail)
        #expect(pair.waitForEvent() == .drained)
    }

    @Test func pastTheByteCapTheOwnerIsTold() throws {
        let pair = try Pair(byteCap: 100_000)
        var outcome = BufferedStream.Sent.written
        var sends = 0
        while outcome == .written || outcome == .queued, sends < 1000 {
            outcome = pair.send([UInt8](repeating: 0x41, count: 50_000))
            sends += 1
        }
        guard case .overCap(let queued) = outcome else {
            Issue.record("never over the cap: \(outcome)")
            return
        }
        #expect(queued > 100_000)
        pair.queue.sync { #expect(pair.stream.queuedBytes == queued) }
    }

    @Test func aPeerThatClosedFailsTheWriteAndLaterSendsAreRefused() throws {
        let pair = try Pair()
        pair.peer?.close()
        pair.peer = nil
        guard case .failed(let error) = pair.send(Array("x\n".utf8)) else {
            Issue.record("writing to a closed peer did not fail")
            return
        }
        #expect(error.isPeerGone)
        #expect(pair.send(Array("y\n".utf8)) == .closed)
        // Reading still sees the end.
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(
            try pair.queue.sync { try buffer.withUnsafeMutableBytes { try pair.stream.read(into: $0) } } == .endOfFile)
    }

    @Test func aPeerThatClosesWhileBytesWaitIsAnEvent() throws {
        let pair = try Pair()
        _ = pair.fill()
        pair.peer?.close()
        pair.peer = nil
        guard case .failed(let error)? = pair.waitForEvent() else {
            Issue.record("no failure event")
            return
        }
        #expect(error.isPeerGone)
        pair.queue.sync { #expect(pair.stream.queuedBytes == 0 && !pair.stream.isWaitingForWritable) }
        #expect(pair.send([1]) == .closed)
    }

    @Test func closingEndsTheStreamThenRunsTheContinuation() throws {
        let pair = try Pair()
        let closed = DispatchSemaphore(value: 0)
        pair.queue.sync {
            pair.stream.watchReadable(on: pair.queue) {}
            pair.stream.close { closed.signal() }
            #expect(pair.stream.isClosed)
        }
        #expect(pair.send([1]) == .closed)
        #expect(closed.wait(timeout: .now() + 10) == .success)
        var buffer = [UInt8](repeating: 0, count: 4)
        #expect(try buffer.withUnsafeMutableBytes { try pair.peer!.receive(into: $0, blocking: true) } == .endOfFile)
    }
}
