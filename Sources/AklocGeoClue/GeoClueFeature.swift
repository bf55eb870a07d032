import AklocCore
import AklocFeature
import AklocPosix
import AklocSystemd

/// `[geoclue] enable` as a feature (docs/desktop.md): the GeoClue2 service on
/// the system bus. Each started D-Bus client is one engine subscriber of the
/// client's uid, decided by akloc's rules like a socket client of that uid
/// (re-decided by the host on reload), with the client's thresholds as its
/// policy.
///
/// Never fails the daemon: no system bus, or the name taken by GeoClue
/// itself, is logged and everything else is served.
public final class GeoClueFeature: Feature {
    public typealias Settings = GeoClueSettings

    public let name = "GeoClue front"
    public let service: GeoClueService
    private let host: any FeatureHost

    struct Subscriber {
        var id: SubscriberID
        var uid: UInt32
    }

    /// Started clients by client number.
    private(set) var subscribers: [UInt32: Subscriber] = [:]
    public private(set) var ownsName = false
    /// D-Bus clients started and not stopped.
    public var startedClients: Int { subscribers.count }
    private var running = false

    public static func make(_ settings: GeoClueSettings, host: any FeatureHost) -> GeoClueFeature? {
        settings.enabled ? GeoClueFeature(host: host) : nil
    }

    init(host: any FeatureHost) {
        self.host = host
        service = GeoClueService(queue: host.queue) { [weak host] level, message in host?.log(level, message, [:]) }
        var handlers = GeoClueService.Handlers()
        handlers.start = { [weak self] request in self?.startClient(request) ?? .denied("aklocd is stopping") }
        handlers.stop = { [weak self] client in self?.stopClient(client) }
        handlers.policyChanged = { [weak self] client, policy in self?.updateClient(client, policy) }
        service.handlers = handlers
    }

    public func start() throws(ComponentError) {
        running = true
        do {
            switch try service.start() {
            case .owned:
                ownsName = true
                host.log(.notice, "serving \(GeoClueService.busName) on the system bus")
            case .taken:
                host.log(
                    .warning,
                    "\(GeoClueService.busName) is already owned on the system bus (GeoClue itself runs?): "
                        + "not serving desktop clients; everything else is served")
            case .refused(let error):
                host.log(
                    .warning,
                    "the system bus refused \(GeoClueService.busName) (\(error); is "
                        + "/usr/share/dbus-1/system.d/org.freedesktop.GeoClue2.akloc.conf installed?): "
                        + "not serving desktop clients")
            }
        } catch {
            host.log(.warning, "cannot connect to the system bus (\(error)): not serving GeoClue2 clients")
            service.stop()
        }
    }

    public func stop() {
        running = false
        service.stop()
    }

    public func apply(_ settings: GeoClueSettings) {
        host.log(.notice, "[geoclue] applies at the next restart; the GeoClue front and NMEA feed keep theirs")
    }

    /// A D-Bus client's Start: its uid through akloc's rules, then one more
    /// engine subscriber with the client's thresholds as its policy.
    private func startClient(_ request: GeoClueService.StartRequest) -> GeoClueService.Decision {
        guard running else { return .denied("aklocd is stopping") }
        guard host.authorization(uid: request.uid, gid: request.gid).allowsLocation else {
            return .denied("uid \(request.uid) may not get locations ([authorization] in akloc.conf)")
        }
        let client = request.client
        let id = host.addSubscriber(
            .user(uid: request.uid, gid: request.gid),
            sink: Sink(.withSockets) { [weak self] event in
                guard case .didUpdateLocation(let location, _) = event else { return }
                self?.service.deliver(location, to: client)
            })
        subscribers[client] = Subscriber(id: id, uid: request.uid)
        host.startUpdating(id, policy: .init(request.policy), everyEpoch: false)
        host.log(
            .info, "GeoClue client \(request.client) (\(request.desktopID)) of uid \(request.uid) started",
            ["AKLOC_CLIENT_UID": "\(request.uid)"])
        return .started
    }

    private func stopClient(_ client: UInt32) {
        guard let subscriber = subscribers.removeValue(forKey: client) else { return }
        host.removeSubscriber(subscriber.id)
    }

    private func updateClient(_ client: UInt32, _ policy: ThrottlePolicy) {
        guard let subscriber = subscribers[client] else { return }
        host.startUpdating(subscriber.id, policy: .init(policy), everyEpoch: false)
    }
}
