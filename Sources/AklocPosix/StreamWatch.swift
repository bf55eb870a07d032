/// A watch on a `StreamTransport`: suspended while not wanted (an idle
/// writer costs nothing), resumed, or ended.
public protocol StreamWatch: AnyObject {
    func suspend()
    func resume()
    func cancel()
}

extension FileDescriptor.Watch: StreamWatch {}
