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

    /// Reads the wire form (`json`'s inverse), as a client gets it in
    /// `didVisit`, the `visit` key path and the `visits` op. A member missing
    /// or of the wrong type, a departure before the arrival, a coordinate
    /// off the Earth or a negative radius is `badRequest` naming the member
    /// (`"visit.coordinate.latitude" is not a number`). Members a newer
    /// daemon adds, and the derived ones (`formattedAddress`, `flag`), are
    /// not read.
    public init(json: JSONValue) throws(ProtocolError) {
        do {
            try self.init(wire: WireObject(json, "visit"))
        } catch {
            throw ProtocolError(.badRequest, error.description)
        }
    }

    init(wire visit: WireObject) throws(DaemonStatus.FormatError) {
        let arrival = try visit.time("arrival")
        let departure = try visit.optionalTime("departure")
        if let departure, departure < arrival {
            throw visit.invalid("departure", "is before the arrival (\(arrival.iso8601))")
        }
        let radius = try visit.double("radius")
        guard radius.isFinite, radius >= 0 else { throw visit.invalid("radius", "is not a number of metres ≥ 0") }
        // Typed throws do not pass through Optional.map: each optional by hand.
        var placemark: Placemark?
        if let object = try visit.optionalObject("placemark") { placemark = try GeoWire.placemark(wire: object) }
        var country: Country?
        if let object = try visit.optionalObject("country") { country = try GeoWire.country(wire: object) }
        var timeZone: TimeZoneInfo?
        if let object = try visit.optionalObject("timeZone") { timeZone = try GeoWire.timeZone(wire: object) }
        self.init(
            arrival: arrival, departure: departure,
            coordinate: try GeoWire.coordinate(wire: visit.object("coordinate")),
            radius: radius, placemark: placemark, place: try visit.optionalString("place"), country: country,
            timeZone: timeZone)
    }
}
