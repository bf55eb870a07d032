import AklocCore
import AklocGeo
import AklocJSON

/// A stay at one place (DESIGN §15, CoreLocation's `CLVisit`): when it began,
/// when it ended (nil while it lasts), where, and that place in words.
public struct Visit: Hashable, Sendable {
    public var arrival: FixTime
    /// Nil while the visit lasts.
    public var departure: FixTime?
    /// The centre of its fixes (each weighted by its accuracy).
    public var coordinate: Coordinate
    /// Metres: how far its fixes lay from the centre (root mean square).
    public var radius: Double
    /// The centre in words (nil without geo data).
    public var placemark: Placemark?
    /// The saved place the centre lies in (by the place's radius), as the asker sees places.
    public var place: String?
    public var country: Country?
    /// The zone of the centre, its offset at the arrival.
    public var timeZone: TimeZoneInfo?

    public init(
        arrival: FixTime, departure: FixTime?, coordinate: Coordinate, radius: Double, placemark: Placemark? = nil,
        place: String? = nil, country: Country? = nil, timeZone: TimeZoneInfo? = nil
    ) {
        self.arrival = arrival
        self.departure = departure
        self.coordinate = coordinate
        self.radius = radius
        self.placemark = placemark
        self.place = place
        self.country = country
        self.timeZone = timeZone
    }

    /// The wire form (docs/protocol.md, `visits`): unknown members left out.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "arrival": .string(arrival.iso8601),
            "coordinate": GeoWire.coordinate(coordinate),
            "radius": .double((radius * 10).rounded() / 10),
        ]
        members["departure"] = departure.map { .string($0.iso8601) }
        members["placemark"] = placemark.map { GeoWire.placemark($0, timeZone: timeZone) }
        members["place"] = place.map(JSONValue.string)
        members["country"] = country.map(GeoWire.country)
        members["timeZone"] = timeZone.map(GeoWire.timeZone)
        return .object(members)
    }
}
