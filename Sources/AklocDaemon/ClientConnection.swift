import AklocCore
import AklocPosix
import AklocProtocol

/// One subscriber's connection: its byte stream, its outbound queue, its
/// line framer, and who it is. Used only on the daemon's queue.
final class ClientConnection {
    let id: SubscriberID
    let transport: any ClientTransport
    let credentials: UnixStreamSocket.Credentials
    let identity: Authorizer.Identity
    var isAdmin: Bool
    var queue = OutboundQueue()
    var framer = LineFramer()
    let connectedAt: Instant

    var isClosed: Bool { transport.isClosed }

    init(
        id: SubscriberID, transport: any ClientTransport, credentials: UnixStreamSocket.Credentials,
        identity: Authorizer.Identity, isAdmin: Bool, connectedAt: Instant
    ) {
        self.id = id
        self.transport = transport
        self.credentials = credentials
        self.identity = identity
        self.isAdmin = isAdmin
        self.connectedAt = connectedAt
    }

    enum FlushResult {
        case drained
        case blocked
        case failed(SocketError)
    }

    /// Writes queued bytes until the stream would block.
    func flush() -> FlushResult {
        var failure: SocketError?
        var blocked = false
        while !blocked, failure == nil {
            let wrote = queue.writeNext { bytes in
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
        if let failure { return .failed(failure) }
        return blocked ? .blocked : .drained
    }

    /// Stops every handler; the stream is released once they are done
    /// (`FileDescriptor` for a socket), and `then` runs after that.
    func close(then: (() -> Void)? = nil) {
        transport.close(then: then)
    }
}
