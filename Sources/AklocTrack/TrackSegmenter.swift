import AklocCore

/// Decides, per epoch the recorder's subscriber sees, whether it is
/// recorded and in which segment (DESIGN §10). The recorder subscribes to
/// every epoch so it knows the real gaps between fixes; its own policy
/// picks which of them become points (the throttled deliveries).
/// A gap of more than `gap` seconds between epochs, a pause or a source
/// loss ends the segment; the first epoch after that starts the next one,
/// whatever the throttle says, so every segment begins at its first fix.
public struct TrackSegmenter: Hashable, Sendable {
    public enum State: Hashable, Sendable {
        /// Between segments: the next epoch starts segment `next`.
        case between(next: UInt64)
        /// Recording into `segment`; the last epoch arrived at `lastEpochAt`.
        case recording(segment: UInt64, lastEpochAt: Instant)
    }

    public enum Decision: Hashable, Sendable {
        case record(segment: UInt64)
        case skip
    }

    public private(set) var state: State
    public let gap: Double

    /// A new run always starts a new segment: whatever happened while
    /// aklocd was not running is a gap.
    public init(after lastSegment: UInt64?, gap: Double = 60) {
        state = .between(next: (lastSegment ?? 0) &+ 1)
        self.gap = gap
    }

    /// One epoch at `now`; `throttled` when it is a delivery under the
    /// recorder's policy rather than only the every-epoch stream.
    public mutating func epoch(throttled: Bool, at now: Instant) -> Decision {
        switch state {
        case .between(let next):
            state = .recording(segment: next, lastEpochAt: now)
            return .record(segment: next)
        case .recording(let segment, let last):
            if now.seconds(since: last) > gap {
                state = .recording(segment: segment &+ 1, lastEpochAt: now)
                return .record(segment: segment &+ 1)
            }
            state = .recording(segment: segment, lastEpochAt: now)
            return throttled ? .record(segment: segment) : .skip
        }
    }

    /// A pause or a source loss: the next epoch starts a new segment.
    public mutating func interrupt() {
        if case .recording(let segment, _) = state { state = .between(next: segment &+ 1) }
    }

    /// The number the next new segment gets.
    public var nextSegment: UInt64 {
        switch state {
        case .between(let next): next
        case .recording(let segment, _): segment &+ 1
        }
    }

    /// An import took the numbers up to `last`: the next epoch starts a
    /// new segment after them, so no live segment shares an imported one's number.
    public mutating func skip(past last: UInt64) {
        state = .between(next: max(nextSegment, last &+ 1))
    }
}
