import AklocCore

/// The `track` op's arguments (docs/protocol.md, DESIGN §10): which part of
/// the recorded track, one page at a time.
public struct TrackQuery: Hashable, Sendable {
    /// Wall-clock bounds on when aklocd received a point; nil means the last
    /// 24 hours before the request (`since`) and now (`until`).
    public var since: FixTime?
    public var until: FixTime?
    /// Points per page at most.
    public var limit: Int
    /// The previous page's `next`: where this page goes on.
    public var after: String?
    /// Douglas–Peucker tolerance in metres, per segment; nil keeps every point.
    public var simplify: Double?

    public static let defaultLimit = 10_000
    public static let maxLimit = 100_000
    /// The widest tolerance accepted (more would collapse any track to its ends).
    public static let maxSimplify = 100_000.0
    /// The most bytes one reply line holds; a page stops short of it (with a `next`).
    public static let maxReplyBytes = 512 << 10
    /// Seconds before `until` that `since` defaults to.
    public static let defaultSpan: Int64 = 86_400

    public init(
        since: FixTime? = nil, until: FixTime? = nil, limit: Int = TrackQuery.defaultLimit, after: String? = nil,
        simplify: Double? = nil
    ) {
        self.since = since
        self.until = until
        self.limit = limit
        self.after = after
        self.simplify = simplify
    }
}

/// One recorded point as the `track` op returns it: a location (the wire
/// location object) and the segment it belongs to. A new segment starts
/// after a gap of more than 60 s, a pause or a source loss.
public struct TrackPoint: Hashable, Sendable {
    public var location: Location
    public var segment: UInt64

    public init(location: Location, segment: UInt64) {
        self.location = location
        self.segment = segment
    }
}

/// One `track` reply: `{"points":[…],"next":"…"}`; `next` is nil on the last page.
public struct TrackPage: Hashable, Sendable {
    public var points: [TrackPoint]
    public var next: String?

    public init(points: [TrackPoint], next: String?) {
        self.points = points
        self.next = next
    }
}
