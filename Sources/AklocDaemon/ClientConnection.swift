import AklocCore
import AklocPosix
import AklocProtocol

/// One subscriber's connection: its buffered stream (held here, a value:
/// no second object per client), its line framer, and who it is. Used only
/// on the daemon's queue.
final class ClientConnection {
    let id: SubscriberID
    var stream: BufferedStream
    let credentials: UnixStreamSocket.Credentials
    let identity: Authorizer.Identity
    var isAdmin: Bool
    var framer = LineFramer()
    let connectedAt: Instant

    var isClosed: Bool { stream.isClosed }

    init(
        id: SubscriberID, stream: BufferedStream, credentials: UnixStreamSocket.Credentials,
        identity: Authorizer.Identity, isAdmin: Bool, connectedAt: Instant
    ) {
        self.id = id
        self.stream = stream
        self.credentials = credentials
        self.identity = identity
        self.isAdmin = isAdmin
        self.connectedAt = connectedAt
    }

    /// Stops every handler; the stream is released once they are done
    /// (`FileDescriptor` for a socket), and `then` runs after that.
    func close(then: (() -> Void)? = nil) {
        stream.close(then: then)
    }
}
