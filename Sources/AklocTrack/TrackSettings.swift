import AklocCore

/// `[track]` in akloc.conf (docs/track.md, docs/configuration.md): whether
/// aklocd records its own track, how densely, and how much it keeps.
public struct TrackSettings: Hashable, Sendable {
    public var enabled = true
    /// The recorder's own throttle: a point at most every `min-interval`
    /// seconds when it moved `distance` metres, and at least every
    /// `heartbeat` seconds while the receiver has a fix. Any speed above
    /// zero counts as moving, so a slow walk is recorded too.
    public var policy: ThrottlePolicy = {
        var policy = ThrottlePolicy()
        policy.updateSpeed = 0
        policy.minInterval = 1
        policy.distanceFilter = 5
        policy.maxInterval = 60
        return policy
    }()
    /// Day files whose last possible point is older than this are deleted.
    public var retentionDays = 30
    /// All day files together; over it, whole oldest days are deleted.
    public var maxSize = 64 << 20
    /// Seconds between fdatasyncs of newly recorded points (SD cards wear out).
    public var syncInterval: Double = 5
    /// Seconds without a fix after which the next point starts a new segment.
    public var segmentGap: Double = 60

    public init() {}
}
