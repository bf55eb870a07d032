import Dispatch

/// A connected stream and the bytes it has not taken yet: akloc's one
/// outbound-write path. `send` writes what the stream takes now, queues
/// the rest (`OutboundQueue`: coalescing by key, byte accounting) and
/// waits for the stream to be writable again; the owner's handler then
/// calls `writable()`, which writes on, and stops waiting once drained, so
/// an idle stream costs no wake-ups. The daemon's clients, the NMEA feed's
/// readers, the HTTP server's connections and the client library's link
/// to aklocd all write through one.
///
/// A value kept inside its owner's connection object, not an object of its
/// own: with ten thousand clients, one more allocation per client is about
/// a megabyte (bench, issue 28). So it calls nobody: what it did comes back
/// as a result (`Sent`, `Flush`), and the owner decides what follows: what
/// to do past the byte cap (the daemon drops a slow reader, the HTTP server
/// closes a stalled event stream) or after a failed write. Reads pass
/// through to the transport, since each owner frames what it reads its own
/// way.
///
/// Confinement: used on the queue its watches run on.
public struct BufferedStream {
    /// What became of bytes given to `send`.
    public enum Sent: Equatable, Sendable {
        /// All written now.
        case written
        /// Queued behind what the peer has not read yet.
        case queued
        /// Queued, replacing an unsent message with the same coalescing key.
        case coalesced
        /// Queued, and now more than the byte cap waits: the owner lets the peer go.
        case overCap(queuedBytes: Int)
        /// The write failed (`isPeerGone`: the peer had closed). Nothing is
        /// queued any more and later sends are `closed`.
        case failed(SocketError)
        /// Closed, or a write failed before: nothing was sent.
        case closed
    }

    /// What a flush did.
    public enum Flush: Equatable, Sendable {
        /// Everything queued is written.
        case drained
        /// The stream takes no more now; the rest waits.
        case blocked
        /// As for `Sent.failed`.
        case failed(SocketError)
    }

    // The flags last: the owner's next field can use the padding after them.
    public let transport: any StreamTransport
    private var outbound = OutboundQueue()
    private var writeWatch: (any StreamWatch)?
    /// Run once the transport is released (`StreamServer`: a descriptor is free).
    var onClose: (() -> Void)?
    /// Whether the stream waits to be writable (an idle one does not).
    public private(set) var isWaitingForWritable = false
    private var writeFailed = false

    public init(_ transport: any StreamTransport) {
        self.transport = transport
    }

    /// Bytes queued and not written yet.
    public var queuedBytes: Int { outbound.queuedBytes }
    /// Whether nothing waits to be written.
    public var isDrained: Bool { outbound.isEmpty }
    /// Messages a newer one with the same key replaced.
    public var coalescedCount: Int { outbound.coalesced }
    public var isClosed: Bool { transport.isClosing }

    // MARK: Reading

    /// Reads what has arrived, without blocking.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> UnixStreamSocket.Received {
        try transport.read(into: buffer)
    }

    /// Calls `handler` on `queue` whenever there is something to read (or
    /// an end of file), until the stream is closed.
    public func watchReadable(on queue: DispatchQueue, _ handler: @escaping () -> Void) {
        _ = transport.watch(.readable, on: queue, handler: handler)
    }

    // MARK: Writing

    /// Writes `bytes` now, or queues what the stream does not take behind
    /// what waits already; with a `key`, they replace an unsent message with
    /// the same key (never one partly written). When bytes wait, the
    /// stream's write watch calls `handler` on `queue` once it is writable
    /// (the owner calls `writable()` then); `handler` is made only the first
    /// time the stream has to wait.
    public mutating func send(
        _ bytes: [UInt8], coalescingKey key: OutboundQueue.CoalescingKey? = nil, byteCap: Int = .max,
        waitingOn queue: DispatchQueue, _ handler: @autoclosure () -> () -> Void
    ) -> Sent {
        guard !writeFailed, !transport.isClosing else { return .closed }
        var outcome = Sent.queued
        if outbound.isEmpty {
            // The fast path (most streams, most of the time): the shared
            // bytes go straight out, and only what the stream did not take
            // is queued. Its write watch is suspended already.
            let attempt = bytes.withUnsafeBytes { buffer in
                Result { () throws(SocketError) in try transport.write(buffer) }
            }
            let written: Int
            switch attempt {
            case .success(let count): written = count
            case .failure(let error):
                stopWriting()
                return .failed(error)
            }
            if written == bytes.count { return .written }
            outbound.enqueueRemainder(of: bytes, written: written, key: key)
        } else {
            if outbound.enqueue(bytes, key: key) { outcome = .coalesced }
            switch flush() {
            case .drained:
                stopWaitingForWritable()
                return .written
            case .blocked:
                break
            case .failed(let error):
                return .failed(error)
            }
        }
        if outbound.queuedBytes > byteCap { return .overCap(queuedBytes: outbound.queuedBytes) }
        isWaitingForWritable = true
        if let writeWatch {
            writeWatch.resume()
        } else {
            writeWatch = transport.watch(.writable, on: queue, handler: handler())
        }
        return outcome
    }

    /// The stream is writable again (the owner's handler): writes on, and
    /// stops waiting once drained.
    public mutating func writable() -> Flush {
        let result = flush()
        if result == .drained { stopWaitingForWritable() }
        return result
    }

    /// Writes queued bytes until the stream would block (a last flush
    /// before a close, or when the stream is writable again).
    @discardableResult
    public mutating func flush() -> Flush {
        var failure: SocketError?
        var blocked = false
        let transport = transport
        while !blocked, failure == nil {
            let wrote = outbound.writeNext { bytes in
                do throws(SocketError) {
                    let count = try transport.write(bytes)
                    if count == 0 { blocked = true }
                    return count
                } catch {
                    failure = error
                    return 0
                }
            }
            if !wrote { break }
        }
        if let failure {
            stopWriting()
            return .failed(failure)
        }
        return blocked ? .blocked : .drained
    }

    private mutating func stopWaitingForWritable() {
        guard isWaitingForWritable else { return }
        isWaitingForWritable = false
        writeWatch?.suspend()
    }

    /// After a failed write nothing more can be written: what waits is
    /// dropped and the write watch ended. Reading goes on (a peer that
    /// closed may have sent something first).
    private mutating func stopWriting() {
        writeFailed = true
        outbound.removeAll()
        isWaitingForWritable = false
        writeWatch?.cancel()
        writeWatch = nil
    }

    // MARK: Closing

    /// Stops every watch and releases the transport; `then` runs once it is
    /// released (a socket's descriptor is free again). Idempotent.
    public mutating func close(then: (() -> Void)? = nil) {
        isWaitingForWritable = false
        writeWatch = nil
        guard let released = onClose else {
            transport.close(then: then)
            return
        }
        onClose = nil
        transport.close {
            released()
            then?()
        }
    }
}
