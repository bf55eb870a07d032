import CPosix
import Dispatch
import Glibc

/// An open descriptor with one owner: closed exactly once, by `close()` or
/// when the owner lets go of it, and never while something still watches it.
///
/// The second rule is why this type exists (issue 18): a descriptor closed
/// while an event registration for its number is still live can be handed
/// out again by the next `accept`, and the registration then belongs to the
/// wrong connection. `close()` ends every watch first, then closes.
///
/// Watches go through the queue's `EventPoller` (one epoll instance per
/// queue), not a dispatch source per descriptor: libdispatch on Linux
/// unregisters a source whose peer hung up from the source's own queue,
/// racing its manager thread (see `EventPoller`), which is what crashed
/// aklocd under churn.
///
/// Watch it on one serial queue, and use it there; `close()` and a watch's
/// `suspend`, `resume` and `cancel` called elsewhere (a client library's
/// object released on another thread) run on that queue, later.
public final class FileDescriptor {
    /// The descriptor number; valid until `isClosed`.
    public let rawValue: Int32
    /// Whether `close()` was called.
    public private(set) var isClosing = false
    /// Whether the descriptor has been closed.
    public private(set) var isClosed = false

    private let closer: (Int32) -> Void
    private var watches: [Watch] = []
    private var poller: EventPoller?
    private var token: UInt64 = 0
    /// What epoll was last told to watch for (0: not registered).
    private var registered: UInt32 = 0

    /// Takes ownership of `rawValue`. `closer` releases it; the default is
    /// close(2). A library that owns the descriptor itself (libgps's
    /// `gps_close`) passes its own.
    public init(adopting rawValue: Int32, closer: @escaping (Int32) -> Void = { Syscall.close($0) }) {
        self.rawValue = rawValue
        self.closer = closer
    }

    /// A close-on-exec duplicate of `other`, owned by the result.
    public static func duplicate(_ other: Int32) throws(Errno) -> FileDescriptor {
        FileDescriptor(adopting: try Syscall.retryingOnEINTR { fcntl(other, F_DUPFD_CLOEXEC, 0) })
    }

    /// Sets O_NONBLOCK (a descriptor systemd passed in, a connected socket).
    public func setNonBlocking() throws(Errno) {
        let flags = try Syscall.retryingOnEINTR { fcntl(rawValue, F_GETFL) }
        guard flags & O_NONBLOCK == 0 else { return }
        try Syscall.retryingOnEINTR { fcntl(rawValue, F_SETFL, flags | O_NONBLOCK) }
    }

    deinit {
        // The poller holds a watched descriptor until its watches end, so an
        // owner can only let go of it with nothing watching.
        if !isClosed { closer(rawValue) }
    }

    public enum Event: Sendable {
        case readable
        case writable
    }

    /// A watch on this descriptor for one kind of readiness. Suspending it
    /// keeps it, but stops its handler (and takes the interest out of
    /// epoll, so a level-triggered event cannot spin the queue meanwhile).
    public final class Watch {
        public let event: Event
        public private(set) var isSuspended = false
        public fileprivate(set) var isCancelled = false
        fileprivate let handler: () -> Void
        fileprivate weak var descriptor: FileDescriptor?

        fileprivate init(_ event: Event, _ descriptor: FileDescriptor, _ handler: @escaping () -> Void) {
            self.event = event
            self.descriptor = descriptor
            self.handler = handler
        }

        fileprivate var isActive: Bool { !isSuspended && !isCancelled }

        /// Stops its handler from being called, keeping the watch.
        public func suspend() {
            descriptor?.onQueue { [self] in
                guard !isSuspended, !isCancelled else { return }
                isSuspended = true
                descriptor?.updateInterest()
            }
        }

        public func resume() {
            descriptor?.onQueue { [self] in
                guard isSuspended, !isCancelled else { return }
                isSuspended = false
                descriptor?.updateInterest()
            }
        }

        /// Ends this watch alone (the descriptor stays open, e.g. when write
        /// interest ends). Its handler is not called afterwards.
        public func cancel() {
            descriptor?.onQueue { [self] in
                guard !isCancelled else { return }
                isCancelled = true
                descriptor?.updateInterest()
            }
        }
    }

    /// Calls `handler` on `queue` whenever the descriptor is readable or
    /// writable (or hung up, or failed: the handler's read or write tells
    /// which) until the watch is cancelled or the descriptor closed.
    public func watch(
        _ event: Event, on queue: DispatchQueue, handler: @escaping () -> Void
    ) -> Watch {
        dispatchPrecondition(condition: .onQueue(queue))
        precondition(!isClosing, "watching a descriptor that is being closed")
        let poller = self.poller ?? EventPoller.shared(for: queue)
        // On `queue` (checked above), so its poller is the current one.
        precondition(poller.isCurrent, "one descriptor, one queue")
        if self.poller == nil {
            self.poller = poller
            token = poller.add(self)
        }
        let watch = Watch(event, self, handler)
        watches.removeAll { $0.isCancelled }
        watches.append(watch)
        updateInterest()
        return watch
    }

    /// Ends every watch on the descriptor and closes it; `then` runs after
    /// the close, for work that needs the descriptor number to be free
    /// (resuming `accept` after EMFILE). Idempotent.
    public func close(then: (() -> Void)? = nil) {
        if let poller, !poller.isCurrent {
            poller.perform { [self] in close(then: then) }
            return
        }
        if !isClosing {
            isClosing = true
            for watch in watches { watch.isCancelled = true }
            watches.removeAll()
            updateInterest()
            if let poller { poller.remove(token) }
            poller = nil
            finishClose()
        }
        then?()
    }

    /// Runs `body` on the watching queue (at once when there, or unwatched).
    fileprivate func onQueue(_ body: @escaping () -> Void) {
        if let poller { poller.perform(body) } else { body() }
    }

    /// Tells epoll what the live watches want now.
    fileprivate func updateInterest() {
        guard let poller else { return }
        var wanted: UInt32 = 0
        for watch in watches where watch.isActive {
            wanted |= watch.event == .readable ? EPOLLIN.rawValue : EPOLLOUT.rawValue
        }
        poller.update(rawValue, token: token, from: registered, to: wanted)
        registered = wanted
    }

    private func finishClose() {
        guard !isClosed else { return }
        isClosed = true
        closer(rawValue)
    }
}

extension FileDescriptor: EventPoller.Target {
    func poller(_ poller: EventPoller, didReport events: UInt32) {
        // A hang-up or an error is news for every watch: its read or
        // write finds out which. Re-checked per watch: a handler may close.
        let failed = events & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
        for watch in watches {
            guard watch.isActive, !isClosing else { continue }
            let mask = watch.event == .readable ? EPOLLIN.rawValue : EPOLLOUT.rawValue
            if failed || events & mask != 0 { watch.handler() }
        }
    }
}
