import Dispatch
import Glibc

/// An open descriptor with one owner: closed exactly once, by `close()` or
/// when the owner lets go of it, and never while a dispatch source still
/// watches it.
///
/// The second rule is why this type exists (issue 18). libdispatch on Linux
/// keeps one epoll registration (a "muxnote") per descriptor number for all
/// the sources on it, and removes a source from it asynchronously, on its
/// manager thread, some time after `cancel()`. A descriptor closed as soon as
/// one of its sources is cancelled can be handed out again by the next
/// `accept` while another source's registration for the old number is still
/// there; the new connection's source then joins the stale registration,
/// and when that is torn down the manager thread is left with a pointer to
/// freed memory (SIGSEGV in `_dispatch_event_loop_drain`). A source's cancel
/// handler runs only after its registration is gone, so the descriptor is
/// closed once every source made through `watch` has run its cancel handler.
///
/// Not thread-safe: use it, and give its sources, one serial queue.
public final class FileDescriptor {
    /// The descriptor number; valid until `isClosed`.
    public let rawValue: Int32
    /// Whether `close()` was called (the descriptor itself may still be
    /// open, waiting for its sources to be cancelled).
    public private(set) var isClosing = false
    /// Whether the descriptor has been closed.
    public private(set) var isClosed = false

    private let closer: (Int32) -> Void
    private var watches: [Watch] = []
    private var uncancelled = 0
    private var onClosed: [() -> Void] = []

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

    deinit {
        // Sources retain their descriptor through their cancel handlers, so
        // an owner can only let go of it with no source left uncancelled.
        if !isClosed { closer(rawValue) }
    }

    public enum Event: Sendable {
        case readable
        case writable
    }

    /// A dispatch source on this descriptor. Suspension is tracked, because
    /// a source must be resumed before it can be cancelled and released.
    public final class Watch {
        public let source: any DispatchSourceProtocol
        public private(set) var isSuspended = false

        init(_ source: any DispatchSourceProtocol) {
            self.source = source
        }

        /// Stops its event handler from running, keeping the registration.
        public func suspend() {
            guard !isSuspended, !source.isCancelled else { return }
            source.suspend()
            isSuspended = true
        }

        public func resume() {
            guard isSuspended else { return }
            source.resume()
            isSuspended = false
        }

        /// Cancels this source alone (the descriptor stays open, e.g. when
        /// write interest ends); the descriptor's `close()` still waits for
        /// its cancel handler.
        public func cancel() {
            resume()
            source.cancel()
        }
    }

    /// Starts a dispatch source on `queue` calling `handler` whenever the
    /// descriptor is readable or writable. It is cancelled by `close()`.
    public func watch(
        _ event: Event, on queue: DispatchQueue, handler: @escaping () -> Void
    ) -> Watch {
        precondition(!isClosing, "watching a descriptor that is being closed")
        let source: any DispatchSourceProtocol =
            switch event {
            case .readable: DispatchSource.makeReadSource(fileDescriptor: rawValue, queue: queue)
            case .writable: DispatchSource.makeWriteSource(fileDescriptor: rawValue, queue: queue)
            }
        source.setEventHandler(handler: handler)
        uncancelled += 1
        source.setCancelHandler { [self] in sourceCancelled() }
        source.activate()
        let watch = Watch(source)
        watches.removeAll { $0.source.isCancelled }
        watches.append(watch)
        return watch
    }

    /// Cancels every source on the descriptor and closes it once all of
    /// them have run their cancel handlers (at once when there are none).
    /// `then` runs after the close, for work that needs the descriptor
    /// number to be free (resuming `accept` after EMFILE). Idempotent.
    public func close(then: (() -> Void)? = nil) {
        if let then {
            if isClosed { then() } else { onClosed.append(then) }
        }
        guard !isClosing else { return }
        isClosing = true
        for watch in watches { watch.cancel() }
        watches.removeAll()
        if uncancelled == 0 { finishClose() }
    }

    private func sourceCancelled() {
        uncancelled -= 1
        if uncancelled == 0, isClosing { finishClose() }
    }

    private func finishClose() {
        guard !isClosed else { return }
        isClosed = true
        closer(rawValue)
        let callbacks = onClosed
        onClosed.removeAll()
        for callback in callbacks { callback() }
    }
}
