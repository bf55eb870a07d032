/// Where a point is, in words (DESIGN §9; names follow CoreLocation's
/// CLPlacemark). Members the data does not know are nil and left out of the
/// wire form and of `formattedAddress`.
public struct Placemark: Hashable, Sendable {
    public var name: String?
    /// The nearest populated place (in the point's country, when known).
    public var locality: String?
    public var subAdministrativeArea: String?
    public var administrativeArea: String?
    public var isoCountryCode: String?
    public var country: String?
    /// IANA identifier.
    public var timeZone: String?
    /// Of the place; the asked point when no place is known.
    public var coordinate: Coordinate
    /// Metres from the place to the asked point.
    public var distance: Double?
    /// Degrees from the place to the asked point, clockwise from true north.
    public var bearing: Double?

    public init(
        name: String? = nil, locality: String? = nil, subAdministrativeArea: String? = nil,
        administrativeArea: String? = nil, isoCountryCode: String? = nil, country: String? = nil,
        timeZone: String? = nil, coordinate: Coordinate, distance: Double? = nil, bearing: Double? = nil
    ) {
        self.name = name
        self.locality = locality
        self.subAdministrativeArea = subAdministrativeArea
        self.administrativeArea = administrativeArea
        self.isoCountryCode = isoCountryCode
        self.country = country
        self.timeZone = timeZone
        self.coordinate = coordinate
        self.distance = distance
        self.bearing = bearing
    }

    /// The placemark of `place` seen from `point` (nil: the place itself, as a
    /// search result without `near`). `country` is the name of the place's
    /// country; the country table (iso-codes) owns those.
    public init(place: PopulatedPlace, from point: Coordinate?, country: String? = nil) {
        self.init(
            name: place.name, locality: place.name, subAdministrativeArea: place.subAdministrativeArea,
            administrativeArea: place.administrativeArea, isoCountryCode: place.countryCode, country: country,
            timeZone: place.timeZone, coordinate: place.coordinate,
            distance: point.map { place.coordinate.distance(to: $0) },
            bearing: point.map { place.coordinate.bearing(to: $0) })
    }

    /// Below this the point is "at" the place, not "N km from" it.
    public static let nearbyDistance = 500.0

    /// "3 km NE of Enkhuizen, North Holland, Netherlands"; "Enkhuizen, …"
    /// within 500 m of the place; only the known parts.
    public var formattedAddress: String {
        var parts: [String] = []
        if let locality {
            if let distance, let bearing, distance >= Self.nearbyDistance {
                let kilometres = max(1, Int((distance / 1000).rounded()))
                parts.append("\(kilometres) km \(Self.compassPoint(bearing)) of \(locality)")
            } else {
                parts.append(locality)
            }
        }
        if let administrativeArea, administrativeArea != locality { parts.append(administrativeArea) }
        if let country = country ?? isoCountryCode { parts.append(country) }
        return parts.joined(separator: ", ")
    }

    /// One of the eight compass points for a bearing in degrees.
    public static func compassPoint(_ bearing: Double) -> String {
        let points = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]
        guard bearing.isFinite else { return "N" }
        let sector = Int(((bearing.truncatingRemainder(dividingBy: 360) + 360 + 22.5) / 45).rounded(.down)) % 8
        return points[sector]
    }
}

extension Gazetteer {
    /// Reverse geocoding: the nearest place to `point` in the country that
    /// contains it (`country`, from the borders lookup), or the nearest place
    /// anywhere when the caller gives none. A country with no place gives a
    /// placemark of the country alone.
    public func placemark(at point: Coordinate, country: (code: String, name: String?)? = nil) throws -> Placemark {
        let point = try GeoQueryError.checked(point, field: "coordinate")
        guard let place = try nearest(to: point, countryCode: country?.code) else {
            return Placemark(isoCountryCode: country?.code.uppercased(), country: country?.name, coordinate: point)
        }
        var placemark = Placemark(place: place, from: point, country: country?.name)
        if let country { placemark.isoCountryCode = country.code.uppercased() }
        return placemark
    }
}
