import AklocCore

/// A client's `TimeThreshold` (seconds) and `DistanceThreshold` (metres) as
/// the engine's throttle policy: GeoClue skips a location when less time
/// than the one or less distance than the other has passed since the last.
public struct GeoClueThresholds: Hashable, Sendable {
    public var time: UInt32 = 0
    public var distance: UInt32 = 0

    public init(time: UInt32 = 0, distance: UInt32 = 0) {
        self.time = time
        self.distance = distance
    }

    /// Both 0 (GeoClue's default): every epoch. A time threshold alone: at
    /// most one location per `time` seconds, whether moving or not. With a
    /// distance threshold the heartbeat (`maxInterval`) goes to its limit,
    /// so only motion of at least `distance` metres (and `time` seconds)
    /// delivers; any speed counts as motion (`updateSpeed` 0).
    public var policy: ThrottlePolicy {
        var policy = ThrottlePolicy()
        let interval = min(Double(time), ThrottlePolicy.intervalLimit)
        policy.updateSpeed = 0
        policy.minInterval = interval
        policy.maxInterval = distance > 0 ? ThrottlePolicy.intervalLimit : interval
        policy.distanceFilter = Double(distance)
        return policy
    }
}
