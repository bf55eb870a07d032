import CPosix
import Dispatch
import Glibc
import Synchronization

/// One epoll instance per dispatch queue, for every `FileDescriptor` watched
/// on that queue; libdispatch sees only the epoll descriptor, through one
/// read source that lives as long as the process.
///
/// Why not a dispatch source per descriptor (issue 18): when the peer of a
/// socket closes, the kernel reports EPOLLHUP, and libdispatch's manager
/// thread marks every source on that descriptor "needs delete" and wakes it.
/// The source's target queue then acknowledges the deletion itself
/// (`_dispatch_source_invoke2` → `_dispatch_unote_unregister_muxed`),
/// unlinking the source from the descriptor's muxnote and freeing the
/// muxnote on a worker thread while the manager thread may still be walking
/// that muxnote's reader and writer lists, or inserting another muxnote in
/// the same hash bucket, with no lock between them. Under client churn the
/// manager thread then follows freed memory (SIGSEGV in
/// `_dispatch_event_loop_drain`). An epoll descriptor never hangs up, so
/// watching it alone keeps libdispatch out of that path; the client
/// sockets' hang-ups arrive here, on the queue, as readiness.
///
/// Level-triggered: a handler that leaves data unread is called again on the
/// next round. Used only on its queue; it goes away with the last descriptor
/// it watches (a client library makes a queue per connection).
///
/// An `EventLoop` owns its queue's poller instead (aklocd's main queue): no
/// dispatch source then, the loop's thread waits in `epoll_wait` on it
/// itself (`wait(milliseconds:)`), so a ready descriptor's handler runs with
/// no thread hop; a call from another thread reaches it through the loop.
final class EventPoller: @unchecked Sendable {
    // @unchecked: every member but `queue` is touched only on `queue`.

    /// What a registered descriptor wants, and where its events go.
    protocol Target: AnyObject {
        func poller(_ poller: EventPoller, didReport events: UInt32)
    }

    let queue: DispatchQueue
    private let epoll: Int32
    private var source: (any DispatchSourceRead)?
    private var targets: [UInt64: any Target] = [:]
    private var nextToken: UInt64 = 1
    private var events = [epoll_event](repeating: epoll_event(), count: 64)
    /// The last round's ready list, kept for its capacity (see `drain`).
    private var ready: [(token: UInt64, events: UInt32)] = []

    private static let pollers = Mutex<[ObjectIdentifier: EventPoller]>([:])
    /// Marks a poller's queue, so a call from elsewhere can hop onto it.
    private static let queueKey = DispatchSpecificKey<UInt>()

    /// The poller for `queue`, made the first time a descriptor is watched on it.
    static func shared(for queue: DispatchQueue) -> EventPoller {
        // A loop's poller is found by the queue's own mark as well: Swift
        // wraps a queue in a new object each time `DispatchQueue.main` is
        // read. Callers are on `queue` (FileDescriptor checks), so the mark
        // is that queue's.
        let mark = DispatchQueue.getSpecific(key: queueKey)
        return pollers.withLock { pollers in
            if let poller = pollers[ObjectIdentifier(queue)] { return poller }
            if let mark, let poller = loopPollers.withLock({ $0[mark] }) {
                return poller
            }
            let poller = EventPoller(queue: queue, hop: nil)
            pollers[ObjectIdentifier(queue)] = poller
            return poller
        }
    }

    /// The poller an `EventLoop` waits on for `queue`: it stays for the
    /// loop's life, and a call from another thread runs through `hop`
    /// (which wakes the loop). Fails when `queue` already has a poller.
    static func owned(by hop: @escaping (@escaping () -> Void) -> Void, for queue: DispatchQueue) -> EventPoller? {
        pollers.withLock { pollers in
            guard pollers[ObjectIdentifier(queue)] == nil else { return nil }
            let poller = EventPoller(queue: queue, hop: hop)
            pollers[ObjectIdentifier(queue)] = poller
            loopPollers.withLock { $0[poller.identity] = poller }
            return poller
        }
    }

    /// The loops' pollers by their queue's mark (see `shared(for:)`).
    private static let loopPollers = Mutex<[UInt: EventPoller]>([:])

    /// Runs a call from another thread on the loop that owns this poller
    /// (nil: a dispatch-source poller, which hops with `queue.async`).
    private let hop: ((@escaping () -> Void) -> Void)?

    private init(queue: DispatchQueue, hop: ((@escaping () -> Void) -> Void)?) {
        self.queue = queue
        self.hop = hop
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epoll >= 0, "epoll_create1: \(Errno.current)")
        if hop == nil {
            let source = DispatchSource.makeReadSource(fileDescriptor: epoll, queue: queue)
            // Strong: the source's handlers are released when it is cancelled.
            source.setEventHandler { [self] in drain(milliseconds: 0) }
            source.setCancelHandler { [epoll] in Syscall.close(epoll) }
            source.activate()
            self.source = source
        }
        queue.setSpecific(key: Self.queueKey, value: identity)
    }

    /// The loop is done with its poller: the queue may have another.
    func retire() {
        Self.pollers.withLock { pollers in
            if pollers[ObjectIdentifier(queue)] === self { pollers[ObjectIdentifier(queue)] = nil }
        }
        _ = Self.loopPollers.withLock { $0.removeValue(forKey: identity) }
        queue.setSpecific(key: Self.queueKey, value: nil)
        targets.removeAll()
        if source == nil { Syscall.close(epoll) }
    }

    private var identity: UInt { UInt(bitPattern: ObjectIdentifier(self)) }

    /// Whether the caller is running on `queue`.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.queueKey) == identity }

    /// Runs `body` on the queue: at once when already there, later otherwise
    /// (a manager released on another thread closing its socket).
    func perform(_ body: @escaping () -> Void) {
        if isCurrent { return body() }
        if let hop { return hop(body) }
        let job = Hop(body: body)
        queue.async { job.body() }
    }

    private struct Hop: @unchecked Sendable {
        // @unchecked: `body` runs only on the poller's queue.
        let body: () -> Void
    }

    /// A token for `target`'s registrations; events come with it, so a
    /// stale event for a descriptor number handed out again finds nobody.
    func add(_ target: any Target) -> UInt64 {
        let token = nextToken
        nextToken += 1
        targets[token] = target
        return token
    }

    /// Sets what `fd` is watched for: EPOLLIN, EPOLLOUT, both, or nothing
    /// (removed from epoll, so not even a hang-up wakes the queue for it).
    /// `registered` is what was set before.
    func update(_ fd: Int32, token: UInt64, from registered: UInt32, to wanted: UInt32) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard wanted != registered else { return }
        var event = epoll_event()
        event.events = wanted
        event.data.u64 = token
        let operation = registered == 0 ? EPOLL_CTL_ADD : wanted == 0 ? EPOLL_CTL_DEL : EPOLL_CTL_MOD
        let result = epoll_ctl(epoll, operation, fd, &event)
        precondition(result == 0 || operation == EPOLL_CTL_DEL, "epoll_ctl(\(fd)): \(Errno.current)")
    }

    /// Forgets `token`: events already harvested for it are dropped. With
    /// the last one the poller retires: the next watch makes a new one.
    func remove(_ token: UInt64) {
        targets[token] = nil
        // A loop's poller lives as long as the loop (`retire`).
        guard targets.isEmpty, hop == nil else { return }
        Self.pollers.withLock { pollers in
            if pollers[ObjectIdentifier(queue)] === self { pollers[ObjectIdentifier(queue)] = nil }
        }
        queue.setSpecific(key: Self.queueKey, value: nil)
        // The epoll descriptor closes in the cancel handler (never hangs up).
        source?.cancel()
        source = nil
    }

    /// Waits up to `milliseconds` (-1: for ever) for a descriptor to be
    /// ready, then calls the targets of those that are: the loop's wait.
    /// Returns how many were ready (0: the time passed, or a signal came).
    @discardableResult
    func wait(milliseconds: Int32) -> Int {
        dispatchPrecondition(condition: .onQueue(queue))
        return drain(milliseconds: milliseconds)
    }

    @discardableResult
    private func drain(milliseconds: Int32) -> Int {
        // EINTR is not retried here: the loop recomputes its timeout first.
        let count: Int32 = events.withUnsafeMutableBufferPointer { buffer in
            let result = try? Syscall.retryingOnEINTR {
                let count = epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), milliseconds)
                return count < 0 && errno == EINTR ? 0 : count
            }
            return result ?? 0
        }
        guard count > 0 else { return 0 }
        // Copied out: a handler may watch more descriptors, or close them.
        // Into last round's list, taken out of `self` while the handlers run
        // (so none could see it change), so a round allocates nothing.
        var batch = ready
        ready = []
        batch.removeAll(keepingCapacity: true)
        for index in 0..<Int(count) { batch.append((events[index].data.u64, events[index].events)) }
        for (token, reported) in batch {
            let target = targets[token]
            target?.poller(self, didReport: reported)
        }
        ready = batch
        return Int(count)
    }
}
