import AklocCore
import AklocProtocol
import Dispatch

/// One subscriber's socket: its read and write sources, its outbound queue,
/// and who it is. Used only on the daemon's queue.
final class ClientConnection {
    let id: SubscriberID
    let socket: UnixSocket
    let credentials: UnixSocket.Credentials
    let identity: Authorizer.Identity
    var isAdmin: Bool
    var queue = OutboundQueue()
    var framer = LineFramer()
    let connectedAt: Instant

    private let readSource: DispatchSourceRead
    private var writeSource: DispatchSourceWrite?
    private var writeSuspended = false
    private(set) var isClosed = false

    init(
        id: SubscriberID, socket: UnixSocket, credentials: UnixSocket.Credentials,
        identity: Authorizer.Identity, isAdmin: Bool, connectedAt: Instant,
        queue dispatchQueue: DispatchQueue, onReadable: @escaping @Sendable () -> Void
    ) {
        self.id = id
        self.socket = socket
        self.credentials = credentials
        self.identity = identity
        self.isAdmin = isAdmin
        self.connectedAt = connectedAt
        readSource = DispatchSource.makeReadSource(fileDescriptor: socket.fd, queue: dispatchQueue)
        readSource.setEventHandler(handler: onReadable)
        readSource.activate()
    }

    enum FlushResult {
        case drained
        case blocked
        case failed(SocketError)
    }

    /// Writes queued bytes until the socket would block.
    func flush() -> FlushResult {
        var failure: SocketError?
        var blocked = false
        while !blocked, failure == nil {
            let wrote = queue.writeNext { bytes in
                do throws(SocketError) {
                    let count = try socket.write(bytes)
                    if count == 0 { blocked = true }
                    return count
                } catch {
                    failure = error
                    return 0
                }
            }
            if !wrote { break }
        }
        if let failure { return .failed(failure) }
        return blocked ? .blocked : .drained
    }

    /// Asks for a callback when the socket is writable again (after `flush` blocked).
    func waitForWritable(queue dispatchQueue: DispatchQueue, handler: @escaping @Sendable () -> Void) {
        if let writeSource {
            if writeSuspended {
                writeSource.resume()
                writeSuspended = false
            }
            return
        }
        let source = DispatchSource.makeWriteSource(fileDescriptor: socket.fd, queue: dispatchQueue)
        source.setEventHandler(handler: handler)
        source.activate()
        writeSource = source
    }

    /// Stops write callbacks once the queue is drained, so an idle client costs nothing.
    func stopWaitingForWritable() {
        if let writeSource, !writeSuspended {
            writeSource.suspend()
            writeSuspended = true
        }
    }

    /// Cancels both sources and closes the descriptor once dispatch is done with it.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        if let writeSource {
            // A source must not be released while suspended.
            if writeSuspended { writeSource.resume() }
            writeSource.cancel()
        }
        let socket = socket
        readSource.setCancelHandler { socket.close() }
        readSource.cancel()
    }
}
