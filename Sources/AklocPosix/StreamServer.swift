import AklocCore
import Dispatch

/// A listening socket and its accept loop: akloc's one accept loop, for
/// the daemon's clients, the NMEA feed's readers and the HTTP server.
/// Every accepted connection becomes a `BufferedStream` handed to the owner.
///
/// The one back-off: a failed accept (EMFILE, ENFILE, ENOBUFS…) leaves the
/// connection waiting in the backlog, so the level-triggered listening
/// watch would fire again at once and spin the queue, starving every
/// connection already served. The server stops listening instead, until
/// a stream it accepted is closed (a descriptor is free again) or
/// `retryDelay` has passed; waiting peers stay queued in the backlog, and
/// the failure is reported once per pause, not once per wake-up.
///
/// Confinement: every call on `queue`.
public final class StreamServer<Listener: StreamListener> {
    public static var retryDelay: Double { 1 }

    public let listener: Listener
    public let queue: DispatchQueue
    /// Whether accepting is paused after a failure: the listening watch is
    /// suspended (its interest out of epoll), so the backlog wakes nobody.
    public var isSuspended: Bool { listenWatch?.isSuspended ?? false }
    private let clock: any ShellClock
    private var retry: (any ShellTimer)?
    private let acceptFailed: (SocketError) -> Void
    private let accepted: (BufferedStream, Listener.Peer) -> Void
    private var listenWatch: FileDescriptor.Watch?
    private var stopped = false
    /// Shared by every accepted stream: one closure, not one per connection.
    private lazy var descriptorFreed: () -> Void = { [weak self] in self?.resumeAccepting() }

    /// `accepted` gets each new connection; `acceptFailed` each failure
    /// that pauses accepting (to log it). `clock`'s timers run the retry.
    public init(
        listener: Listener, queue: DispatchQueue, clock: any ShellClock,
        acceptFailed: @escaping (SocketError) -> Void,
        accepted: @escaping (BufferedStream, Listener.Peer) -> Void
    ) {
        self.listener = listener
        self.queue = queue
        self.clock = clock
        self.acceptFailed = acceptFailed
        self.accepted = accepted
    }

    /// Starts accepting.
    public func start() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard listenWatch == nil, !stopped else { return }
        listenWatch = listener.descriptor.watch(.readable, on: queue) { [weak self] in self?.acceptPending() }
    }

    /// Stops accepting for good and closes the listener (removing the file
    /// a Unix listener bound). The streams already handed out are the owner's.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        retry?.cancel()
        retry = nil
        listenWatch = nil
        listener.close(then: nil)
    }

    /// Accepts every waiting connection: the listening watch's handler,
    /// which a test may also call to step the server by hand.
    public func acceptPending() {
        while !stopped, !isSuspended {
            let next: (UnixStreamSocket, Listener.Peer)?
            do {
                next = try listener.accept()
            } catch {
                pause(error)
                return
            }
            guard let (socket, peer) = next else { return }
            var stream = BufferedStream(socket)
            stream.onClose = descriptorFreed
            accepted(stream, peer)
        }
    }

    private func pause(_ error: SocketError) {
        listenWatch?.suspend()
        acceptFailed(error)
        if retry == nil { retry = clock.makeTimer { [weak self] in self?.resumeAccepting() } }
        retry?.schedule(after: Self.retryDelay, on: clock, leeway: 0.1)
    }

    /// Listens again after a pause (a descriptor was freed, or the retry
    /// came); a no-op while not paused.
    public func resumeAccepting() {
        guard isSuspended, !stopped else { return }
        retry?.schedule(at: nil, leeway: 0)
        listenWatch?.resume()
    }
}
