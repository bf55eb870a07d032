import AklocPosix
import AklocProtocol
import Dispatch

/// One connection to aklocd, driven by dispatch sources on the manager's
/// queue: reads are framed into lines, writes that do not fit the socket are
/// kept in order and finished when it drains. Every call and every callback
/// happens on `queue`.
final class DaemonSocket {
    /// Lines from the daemon are short (a status is about 1 KiB); this only
    /// bounds memory against a daemon gone wrong.
    static let maxLineLength = 1 << 20

    /// Closed only once both watches are gone (FileDescriptor, issue 18).
    private let socket: UnixStreamSocket
    private var descriptor: FileDescriptor { socket.descriptor }
    private let queue: DispatchQueue
    private var writeWatch: FileDescriptor.Watch?
    private var framer = LineFramer(maxLineLength: DaemonSocket.maxLineLength)
    private var outbound: [UInt8] = []
    private var closed = false
    /// A write found the daemon gone; reads go on until the end of file.
    private var peerClosed = false
    /// Reports lines, end of file and failures as the core's inputs.
    private let onInput: (ManagerCore.Input) -> Void

    init(path: String, queue: DispatchQueue, onInput: @escaping (ManagerCore.Input) -> Void) throws(SocketError) {
        socket = try UnixStreamSocket.connect(path: path)
        self.queue = queue
        self.onInput = onInput
        _ = descriptor.watch(.readable, on: queue) { [weak self] in self?.readAvailable() }
    }

    deinit { close() }

    func send(_ bytes: [UInt8]) {
        guard !closed, !peerClosed else { return }
        if outbound.isEmpty {
            let written: Int
            switch sendNow(bytes) {
            case .success(let count): written = count
            case .failure(let error):
                fail(error)
                return
            }
            if written == bytes.count { return }
            outbound.append(contentsOf: bytes[written...])
        } else {
            outbound.append(contentsOf: bytes)
        }
        if writeWatch == nil {
            writeWatch = descriptor.watch(.writable, on: queue) { [weak self] in self?.flush() }
        }
    }

    /// Cancels both sources; the descriptor closes once they are gone. Idempotent.
    func close() {
        guard !closed else { return }
        closed = true
        writeWatch = nil
        descriptor.close()
    }

    private func flush() {
        guard !closed, !peerClosed else { return }
        switch sendNow(outbound) {
        case .success(let written): outbound.removeFirst(written)
        case .failure(let error):
            fail(error)
            return
        }
        if outbound.isEmpty {
            writeWatch?.cancel()
            writeWatch = nil
        }
    }

    private func sendNow(_ bytes: [UInt8]) -> Result<Int, SocketError> {
        bytes.withUnsafeBytes { buffer in Result { () throws(SocketError) in try socket.send(buffer) } }
    }

    private func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while !closed {
            let received: UnixStreamSocket.Received
            switch buffer.withUnsafeMutableBytes({ raw in
                Result { () throws(SocketError) in try socket.receive(into: raw) }
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
        if error.isPeerGone {
            // The daemon closed. Writing stops; the read side still delivers
            // what it sent before and then the end of file, which says how
            // it ended (cleanly, or in the middle of a line).
            peerClosed = true
            outbound = []
            writeWatch?.cancel()
            writeWatch = nil
            return
        }
        close()
        onInput(.ioFailed(error.error.description))
    }
}
