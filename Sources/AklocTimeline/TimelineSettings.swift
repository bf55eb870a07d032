/// `[timeline]` in akloc.conf (docs/timeline.md, docs/configuration.md):
/// what counts as a visit. The same values drive the live detector and
/// the history, so both find the same visits.
public struct TimelineSettings: Hashable, Sendable {
    /// Metres: the fixes of a visit stay this close to where it began.
    public var radius: Double = 100
    /// Seconds the fixes must stay within `radius` before it is a visit.
    public var minimumTime: Double = 300

    /// What `radius` may be: below a metre every fix's noise leaves it; above
    /// 100 km a whole region would be one visit.
    public static let radiusRange: ClosedRange<Double> = 1...100_000
    /// What `min-time` may be: a second to a week.
    public static let minimumTimeRange: ClosedRange<Double> = 1...604_800

    public init(radius: Double = 100, minimumTime: Double = 300) {
        self.radius = radius
        self.minimumTime = minimumTime
    }
}
