import AklocCore
import AklocFeature
import AklocPosix

/// `[geoclue] nmea-socket` as a feature: the NMEA feed, and while anyone
/// reads it an engine subscriber (root-equivalent, as the administrator
/// configured it) taking every epoch, so gpsd can idle the receiver when
/// nobody reads.
public final class NMEAFeature: Feature {
    public typealias Settings = GeoClueSettings

    public var name: String { feed.name }
    public let feed: NMEAFeed
    private let host: any FeatureHost
    private var epochs = EpochSubscription()

    public static func make(_ settings: GeoClueSettings, host: any FeatureHost) -> NMEAFeature? {
        guard let path = settings.nmeaSocket else { return nil }
        return NMEAFeature(path: path, mode: settings.nmeaSocketMode, host: host)
    }

    init(path: String, mode: UInt32, host: any FeatureHost) {
        self.host = host
        feed = NMEAFeed(path: path, mode: mode, queue: host.queue, clock: host.clock) { [weak host] level, message in
            host?.log(level, message, ["AKLOC_NMEA": path])
        }
        feed.readersChanged = { [weak self] anyone in self?.readersChanged(anyone) }
    }

    public func start() throws(ComponentError) { try feed.start() }
    public func stop() { feed.stop() }

    private func readersChanged(_ anyone: Bool) {
        epochs.want(anyone, host: host, phase: .withSockets) { [weak self] in self?.feed.write($0) }
    }
}
