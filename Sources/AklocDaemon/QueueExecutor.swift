import Dispatch

/// Runs an actor's jobs on one serial DispatchQueue, so DispatchSource
/// handlers on that queue can enter the actor with `assumeIsolated` and Swift 6
/// checks data races with no locks (DESIGN §1).
///
/// In aklocd the queue is the main queue, which the main thread's
/// `EventLoop` drains itself (EventLoop.swift): a job enqueued from the loop's
/// own handlers runs on the same thread at the loop's next round, and
/// `checkIsolated` holds in every handler the loop calls, since the main
/// thread is always on the main queue. Tests give the daemon a private
/// serial queue instead.
final class QueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
