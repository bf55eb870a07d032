import AklocCore
import AklocGeoClue
import AklocPosix
import AklocSystemd
import Dispatch

/// `[geoclue] enable`: the GeoClue2 service on the system bus as a daemon
/// component. Each started D-Bus client is one engine subscriber; this keeps
/// which is which. The daemon decides and runs the engine (Daemon+GeoClue.swift).
///
/// Never fails the daemon: no system bus, or the name taken by GeoClue
/// itself, is logged and everything else is served.
final class GeoClueFront: Component {
    let name = "GeoClue front"
    let service: GeoClueService
    private let log: (LogLevel, String) -> Void

    struct Subscriber {
        var id: SubscriberID
        var uid: UInt32
        var gid: UInt32
    }

    /// Started clients by client number, and their client numbers by subscriber.
    private(set) var subscribers: [UInt32: Subscriber] = [:]
    private(set) var clients: [SubscriberID: UInt32] = [:]
    private(set) var ownsName = false

    init(queue: DispatchQueue, log: @escaping (LogLevel, String) -> Void) {
        service = GeoClueService(queue: queue, log: log)
        self.log = log
    }

    func start() throws(ComponentError) {
        do {
            switch try service.start() {
            case .owned:
                ownsName = true
                log(.notice, "serving \(GeoClueService.busName) on the system bus")
            case .taken:
                log(
                    .warning,
                    "\(GeoClueService.busName) is already owned on the system bus (GeoClue itself runs?): "
                        + "not serving desktop clients; everything else is served")
            case .refused(let error):
                log(
                    .warning,
                    "the system bus refused \(GeoClueService.busName) (\(error); is "
                        + "/usr/share/dbus-1/system.d/org.freedesktop.GeoClue2.akloc.conf installed?): "
                        + "not serving desktop clients")
            }
        } catch {
            log(.warning, "cannot connect to the system bus (\(error)): not serving GeoClue2 clients")
            service.stop()
        }
    }

    func stop() {
        service.stop()
    }

    func add(client: UInt32, _ subscriber: Subscriber) {
        subscribers[client] = subscriber
        clients[subscriber.id] = client
    }

    func remove(client: UInt32) -> Subscriber? {
        guard let subscriber = subscribers.removeValue(forKey: client) else { return nil }
        clients[subscriber.id] = nil
        return subscriber
    }
}
