import AklocCore
import AklocPosix
import AklocSystemd
import Dispatch

/// The session monitor as a component: it watches a uid's login sessions
/// while that uid has a client connected, and reports changes to the daemon.
final class SessionTracker: Component {
    let name = "session monitor"
    let monitor: any SessionMonitor
    /// Called on the daemon's queue with each batch of changes.
    var onChange: @Sendable ([SessionChange]) -> Void = { _ in }
    private let queue: DispatchQueue
    private let log: (LogLevel, String, KeyValuePairs<String, String>) -> Void
    /// Live connections per uid.
    private var clientsPerUID: [UInt32: Int] = [:]

    init(
        monitor: any SessionMonitor, queue: DispatchQueue,
        log: @escaping (LogLevel, String, KeyValuePairs<String, String>) -> Void
    ) {
        self.monitor = monitor
        self.queue = queue
        self.log = log
    }

    /// Never fails the daemon: without logind every user counts as logged
    /// in, and a monitor that cannot start leaves clients as they connected.
    func start() throws(ComponentError) {
        if !monitor.tracksSessions {
            log(
                .notice,
                "no logind here (/run/systemd/users or /run/systemd/system is missing): "
                    + "every user counts as logged in, so whenInUse clients always get fixes", [:])
            return
        }
        do {
            try monitor.start(on: queue, onChange: onChange)
        } catch {
            log(
                .warning,
                "cannot watch login sessions (\(error)): whenInUse clients keep the session state they had when they connected",
                [:])
        }
    }

    func stop() {
        monitor.stop()
    }

    func isActive(uid: UInt32) -> Bool { monitor.isActive(uid: uid) }

    func clientArrived(uid: UInt32) {
        clientsPerUID[uid, default: 0] += 1
    }

    /// The uid's last client gone: stop watching its login sessions.
    func clientLeft(uid: UInt32) {
        clientsPerUID[uid, default: 1] -= 1
        if clientsPerUID[uid] == 0 {
            clientsPerUID[uid] = nil
            monitor.forget(uid: uid)
        }
    }
}
