import AklocCore

/// The geo lookups as another feature asks them (the timeline names its
/// visits and the countries its trips cross): posted by the geo feature
/// once its data is loaded, so features use the one set of lookups without
/// naming each other. Closures, so the mapped data they read stays mapped
/// as long as anyone holds this.
public struct PlaceDescriber: Sendable {
    /// The placemark, country and time zone of a point, the zone's offset at
    /// `unixSeconds`; nil when the lookup fails.
    public let describe: @Sendable (_ point: Coordinate, _ unixSeconds: Int64) -> GeoLookups.Description?
    /// The alpha-2 code of the country containing a point (its land or its
    /// 12-mile sea); nil at sea beyond.
    public let countryCode: @Sendable (_ point: Coordinate) -> String?

    public init(
        describe: @escaping @Sendable (Coordinate, Int64) -> GeoLookups.Description?,
        countryCode: @escaping @Sendable (Coordinate) -> String?
    ) {
        self.describe = describe
        self.countryCode = countryCode
    }
}
