import AklocPosix
import Dispatch

/// A uid's login session turned active or inactive.
public struct SessionChange: Hashable, Sendable {
    public var uid: UInt32
    public var active: Bool

    public init(uid: UInt32, active: Bool) {
        self.uid = uid
        self.active = active
    }
}

/// Which uids have an active login session (DESIGN §2, Lifecycle):
/// `whenInUse` clients get fixes only while theirs is active.
///
/// A monitor watches the uids it has been asked about with `isActive(uid:)`
/// and reports changes for those only, on the queue given to `start`.
public protocol SessionMonitor: AnyObject, Sendable {
    /// False where there is no logind (containers, CI): every uid then counts
    /// as active and no change is ever reported. The daemon logs this once.
    var tracksSessions: Bool { get }

    /// Whether `uid` has an active session now; from here on changes for
    /// `uid` are reported.
    func isActive(uid: UInt32) -> Bool

    /// Stops watching `uid` (its last client has gone).
    func forget(uid: UInt32)

    /// Starts reporting changes, each batch delivered on `queue`.
    func start(on queue: DispatchQueue, onChange: @escaping @Sendable ([SessionChange]) -> Void) throws(Errno)

    /// Stops reporting; no callback runs after the queue has drained.
    func stop()
}
