import AklocPosix
import Dispatch

/// A connected client's byte stream, as the client server uses it: a Unix
/// socket in the daemon (`SocketTransport`), an in-memory pipe in the
/// embedded-daemon tests. Handlers run on the daemon's queue.
protocol ClientTransport: AnyObject {
    /// Reads what has arrived, without blocking.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> UnixStreamSocket.Received
    /// Writes what the stream takes now; 0 means it would block.
    func write(_ bytes: UnsafeRawBufferPointer) throws(SocketError) -> Int
    /// Calls `handler` whenever there is something to read (or an end of file).
    func watchReadable(_ handler: @escaping () -> Void)
    /// Calls `handler` when the stream takes bytes again, until `stopWaitingForWritable`.
    func waitForWritable(_ handler: @escaping () -> Void)
    func stopWaitingForWritable()
    /// Whether `close` was called.
    var isClosed: Bool { get }
    /// Stops every handler and releases the stream; `then` runs once it is released.
    func close(then: (() -> Void)?)
}

/// A client's Unix socket, watched by dispatch sources on the daemon's queue.
/// The descriptor is a `FileDescriptor`, closed only once both sources are
/// cancelled (issue 18).
final class SocketTransport: ClientTransport {
    let socket: UnixStreamSocket
    private let queue: DispatchQueue
    private var writeWatch: FileDescriptor.Watch?

    init(_ socket: UnixStreamSocket, queue: DispatchQueue) {
        self.socket = socket
        self.queue = queue
    }

    var isClosed: Bool { socket.descriptor.isClosing }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> UnixStreamSocket.Received {
        try socket.receive(into: buffer)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(SocketError) -> Int {
        try socket.send(bytes)
    }

    func watchReadable(_ handler: @escaping () -> Void) {
        _ = socket.descriptor.watch(.readable, on: queue, handler: handler)
    }

    func waitForWritable(_ handler: @escaping () -> Void) {
        guard !isClosed else { return }
        if let writeWatch {
            writeWatch.resume()
            return
        }
        writeWatch = socket.descriptor.watch(.writable, on: queue, handler: handler)
    }

    /// An idle client costs nothing: its write source is suspended, not polled.
    func stopWaitingForWritable() {
        writeWatch?.suspend()
    }

    func close(then: (() -> Void)?) {
        writeWatch = nil
        socket.close(then: then)
    }
}
