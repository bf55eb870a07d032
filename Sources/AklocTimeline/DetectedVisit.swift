/// A visit as the detector found it (the feature adds the place in words).
public struct DetectedVisit: Hashable, Sendable {
    /// Seconds since 1970: the visit's first fix.
    public var arrival: Double
    /// Its last fix inside, once the receiver left for good; nil while it lasts.
    public var departure: Double?
    public var latitude: Double
    public var longitude: Double
    /// Root-mean-square metres of its fixes from the centre.
    public var radius: Double
    public var fixes: Int

    init(_ stay: Stay, departed: Bool) {
        arrival = stay.arrival
        departure = departed ? stay.lastInside.time : nil
        (latitude, longitude) = stay.centre
        radius = stay.spread
        fixes = stay.fixes
    }
}
