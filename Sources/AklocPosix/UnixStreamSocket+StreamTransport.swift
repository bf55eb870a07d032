import Dispatch

/// A socket is a buffered stream's transport as it is: recv and send, its
/// descriptor's watches.
extension UnixStreamSocket: StreamTransport {
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> UnixStreamSocket.Received {
        try receive(into: buffer)
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(SocketError) -> Int {
        try send(bytes)
    }

    public func watch(_ event: FileDescriptor.Event, on queue: DispatchQueue, handler: @escaping () -> Void)
        -> any StreamWatch
    {
        descriptor.watch(event, on: queue, handler: handler)
    }

    public var isClosing: Bool { descriptor.isClosing }
}
