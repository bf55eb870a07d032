import AklocCore
import AklocPosix
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

    private var writeWatch: FileDescriptor.Watch?
    var isClosed: Bool { socket.descriptor.isClosing }

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
        _ = socket.descriptor.watch(.readable, on: dispatchQueue, handler: onReadable)
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
        guard !isClosed else { return }
        if let writeWatch {
            writeWatch.resume()
            return
        }
        writeWatch = socket.descriptor.watch(.writable, on: dispatchQueue, handler: handler)
    }

    /// Stops write callbacks once the queue is drained, so an idle client costs nothing.
    func stopWaitingForWritable() {
        writeWatch?.suspend()
    }

    /// Cancels both sources; the descriptor is closed once dispatch is done
    /// with both (`FileDescriptor`), and `then` runs after that.
    func close(then: (() -> Void)? = nil) {
        writeWatch = nil
        socket.close(then: then)
    }
}
