import Dispatch

/// The byte stream under a `BufferedStream`: a connected socket
/// (`UnixStreamSocket`, for Unix and TCP peers alike), or an in-memory pipe
/// in the tests that run the whole daemon on virtual time. Used on the
/// queue its watches run on.
public protocol StreamTransport {
    /// Reads what has arrived, without blocking.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> UnixStreamSocket.Received
    /// Writes what the stream takes now; 0 means it would block.
    func write(_ bytes: UnsafeRawBufferPointer) throws(SocketError) -> Int
    /// Calls `handler` on `queue` whenever the stream is ready for `event`
    /// (or hung up), until the watch is cancelled or the stream closed.
    func watch(_ event: FileDescriptor.Event, on queue: DispatchQueue, handler: @escaping () -> Void)
        -> any StreamWatch
    /// Whether `close` was called.
    var isClosing: Bool { get }
    /// Stops every watch and releases the stream; `then` runs once it is released.
    func close(then: (() -> Void)?)
}
