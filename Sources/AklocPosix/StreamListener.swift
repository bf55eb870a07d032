/// A listening stream socket a `StreamServer` accepts from: a Unix socket
/// (`UnixListeningSocket`, its peers' credentials with each connection) or
/// a TCP one (`TCPListener`).
public protocol StreamListener {
    /// What the listener learns about a peer at accept.
    associatedtype Peer

    var descriptor: FileDescriptor { get }
    /// The next pending connection, non-blocking and close-on-exec; nil when
    /// none is waiting. Throws when accepting failed (EMFILE, ENFILE…) and
    /// the connection is left waiting in the backlog.
    func accept() throws(SocketError) -> (UnixStreamSocket, Peer)?
    /// Ends the watches and closes the socket; `then` runs after the close.
    func close(then: (() -> Void)?)
}

extension UnixListeningSocket: StreamListener {}
