/// The lookups the daemon serves (DESIGN §9), put together from the mapped
/// data: a point's placemark with its country and time zone, place search,
/// country lookups. Pure: the shell maps the files and reads tzdata; the
/// zone rules come in through `rules`, so tests and the daemon share this
/// one composition.
public struct GeoLookups: Sendable {
    /// Where a point is, in words, with the country and the time zone it lies in.
    public struct Description: Hashable, Sendable {
        /// `timeZone` is the point's zone, `country` the containing country's name.
        public var placemark: Placemark
        /// The country containing the point (its land or its 12-mile sea); nil at sea beyond.
        public var country: Country?
        /// The point's zone now; nil only when tzdata lacks the zone.
        public var timeZone: TimeZoneInfo?

        public init(placemark: Placemark, country: Country?, timeZone: TimeZoneInfo?) {
            self.placemark = placemark
            self.country = country
            self.timeZone = timeZone
        }
    }

    public let gazetteer: Gazetteer
    public let borders: CountryBorders
    public let zones: TimeZoneBorders
    public let countries: CountryTable

    public init(gazetteer: Gazetteer, borders: CountryBorders, zones: TimeZoneBorders, countries: CountryTable) {
        self.gazetteer = gazetteer
        self.borders = borders
        self.zones = zones
        self.countries = countries
    }

    /// The placemark of `point`: the nearest place in the country that
    /// contains it (the nearest anywhere when no country does, without a
    /// country), the country,
    /// and the zone's local time at `unixSeconds`. `field` names the request
    /// member in a `GeoQueryError` for coordinates out of range.
    public func describe(
        _ point: Coordinate, at unixSeconds: Int64, field: String = "coordinate",
        rules: (String) -> TimeZoneRules?
    ) throws -> Description {
        let match = try borders.country(at: point, field: field)
        let country = match.flatMap { countries.country(alpha2: $0.code) }
        var placemark = try gazetteer.placemark(
            at: point, country: match.map { ($0.code, country?.name) })
        if match == nil {
            // At sea beyond every 12-mile limit: the nearest place still says
            // where the point is ("1274 km N of Praia da Vitória"), but the
            // point is in no country, the place's included.
            placemark.isoCountryCode = nil
            placemark.country = nil
        }
        let zone = try zones.zone(at: point, field: field) ?? placemark.timeZone
        placemark.timeZone = zone
        let timeZone = zone.flatMap { identifier in
            rules(identifier).map { TimeZoneInfo(identifier: identifier, rules: $0, at: unixSeconds) }
        }
        return Description(placemark: placemark, country: country, timeZone: timeZone)
    }

    /// Search results as placemarks seen from `near` (none: the places
    /// themselves), each with its country's name.
    public func search(
        _ query: String, near: Coordinate?, within: Double, limit: Int
    ) throws -> [Placemark] {
        try gazetteer.searchPlaces(query, near: near, within: within, limit: limit).map { result in
            Placemark(
                place: result.place, from: near, country: countries.country(alpha2: result.place.countryCode)?.name)
        }
    }
}
