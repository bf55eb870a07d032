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
/// next round. Used only on its queue.
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

    private static let pollers = Mutex<[ObjectIdentifier: EventPoller]>([:])

    /// The poller for `queue`, made the first time a descriptor is watched on it.
    static func shared(for queue: DispatchQueue) -> EventPoller {
        pollers.withLock { pollers in
            if let poller = pollers[ObjectIdentifier(queue)] { return poller }
            let poller = EventPoller(queue: queue)
            pollers[ObjectIdentifier(queue)] = poller
            return poller
        }
    }

    private init(queue: DispatchQueue) {
        self.queue = queue
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epoll >= 0, "epoll_create1: \(Errno.current)")
        let source = DispatchSource.makeReadSource(fileDescriptor: epoll, queue: queue)
        source.setEventHandler { [unowned self] in drain() }
        source.activate()
        self.source = source
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

    /// Forgets `token`: events already harvested for it are dropped.
    func remove(_ token: UInt64) {
        targets[token] = nil
    }

    private func drain() {
        let count = events.withUnsafeMutableBufferPointer { buffer in
            (try? Syscall.retryingOnEINTR { epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), 0) }) ?? 0
        }
        guard count > 0 else { return }
        // Copied out: a handler may watch more descriptors, or close them.
        let ready = (0..<Int(count)).map { (events[$0].data.u64, events[$0].events) }
        for (token, reported) in ready {
            let target = targets[token]
            target?.poller(self, didReport: reported)
        }
    }
}
