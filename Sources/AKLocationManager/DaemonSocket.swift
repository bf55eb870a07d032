import AklocPosix
import AklocProtocol
import Dispatch

/// One connection to aklocd, driven on the manager's queue: reads are
/// framed into lines; writes go through a `BufferedStream`, which keeps what
/// the socket does not take in order and finishes it when the socket
/// drains. Every call and every callback happens on `queue`.
// @unchecked: confined to `queue`; it crosses threads only to be handed to
// that queue (the manager's deinit).
final class DaemonSocket: @unchecked Sendable {
    /// Lines from the daemon are short (a status is about 1 KiB); this only
    /// bounds memory against a daemon gone wrong.
    static let maxLineLength = 1 << 20

    /// Closed only once its watches are gone (FileDescriptor, issue 18).
    private var stream: BufferedStream
    private let queue: DispatchQueue
    private var framer = LineFramer(maxLineLength: DaemonSocket.maxLineLength)
    private var closed = false
    /// Reports lines, end of file and failures as the core's inputs.
    private let onInput: (ManagerCore.Input) -> Void

    init(path: String, queue: DispatchQueue, onInput: @escaping (ManagerCore.Input) -> Void) throws(SocketError) {
        stream = BufferedStream(try UnixStreamSocket.connect(path: path))
        self.queue = queue
        self.onInput = onInput
        stream.watchReadable(on: queue) { [weak self] in self?.readAvailable() }
    }

    deinit { close() }

    func send(_ bytes: [UInt8]) {
        guard !closed else { return }
        let sent = stream.send(bytes, waitingOn: queue, { [weak self] in self?.writable() })
        if case .failed(let error) = sent { fail(error) }
    }

    private func writable() {
        if case .failed(let error) = stream.writable() { fail(error) }
    }

    /// Ends the watches; the descriptor closes once they are gone. Idempotent.
    func close() {
        guard !closed else { return }
        closed = true
        stream.close()
    }

    private func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while !closed {
            let received: UnixStreamSocket.Received
            switch buffer.withUnsafeMutableBytes({ raw in
                Result { () throws(SocketError) in try stream.read(into: raw) }
            }) {
            case .success(let value): received = value
            case .failure(let error):
                fail(error)
                return
            }
            switch received {
            case .wouldBlock:
                return
            case .endOfFile:
                let pending = framer.pendingByteCount
                close()
                onInput(.closed(pendingBytes: pending))
                return
            case .bytes(let count):
                buffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                while !closed, let frame = framer.next() {
                    switch frame {
                    case .line(let line):
                        onInput(.line(line))
                    case .lineTooLong:
                        close()
                        onInput(.lineTooLong(framer.maxLineLength))
                    }
                }
            }
        }
    }

    private func fail(_ error: SocketError) {
        // The daemon closed: the stream writes no more, and the read side
        // still delivers what it sent before and then the end of file,
        // which says how it ended (cleanly, or in the middle of a line).
        if error.isPeerGone { return }
        close()
        onInput(.ioFailed(error.error.description))
    }
}
