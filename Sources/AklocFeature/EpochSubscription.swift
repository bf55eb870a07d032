import AklocCore

/// A feature's every-epoch engine subscriber (root-equivalent) that exists
/// only while the feature wants epochs: while anyone monitors a region,
/// reads the NMEA feed, or there are shared places to watch. Otherwise it is
/// gone, so the engine can close the gpsd watch and gpsd idle the receiver.
public struct EpochSubscription {
    public private(set) var id: SubscriberID?

    public init() {}

    /// Adds or removes the subscriber as `wanted` says; `receive` gets each
    /// epoch's location in `phase`.
    public mutating func want(
        _ wanted: Bool, host: any FeatureHost, phase: Sink.Phase, _ receive: @escaping (Location) -> Void
    ) {
        if wanted, id == nil {
            let added = host.addSubscriber(
                .daemon,
                sink: Sink(phase) { event in
                    guard case .didUpdateLocation(let location, _) = event else { return }
                    receive(location)
                })
            id = added
            host.startUpdating(added, policy: nil, everyEpoch: true)
        } else if !wanted, let current = id {
            id = nil
            host.removeSubscriber(current)
        }
    }
}
