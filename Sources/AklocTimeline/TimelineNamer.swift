import AklocCore
import AklocGeo
import AklocProtocol

/// Turns what the detector found into the wire model: a visit's centre in
/// words (placemark, country, time zone at its arrival) and the saved place
/// it lies in as one user sees places; a trip's visits and the countries
/// its fixes passed through. Without geo data the words are left out.
struct TimelineNamer {
    var describer: PlaceDescriber?
    var places: SavedPlaces
    /// Whose saved places count (the asker's and the shared ones; nil: the shared ones).
    var uid: UInt32?

    func visit(_ found: DetectedVisit) -> Visit {
        let centre = Coordinate(latitude: found.latitude, longitude: found.longitude)
        let arrival = TimelineFix.fixTime(found.arrival)
        var visit = Visit(
            arrival: arrival, departure: found.departure.map(TimelineFix.fixTime), coordinate: centre,
            radius: found.radius)
        if let description = describer?.describe(centre, arrival.secondsSince1970) {
            visit.placemark = description.placemark
            visit.country = description.country
            visit.timeZone = description.timeZone
        }
        visit.place = place(containing: centre)
        return visit
    }

    /// The nearest saved place whose radius holds the point (without an
    /// asker, as the live `visit` is shared by every reader: the shared places).
    func place(containing point: Coordinate) -> String? {
        var best: (name: String, distance: Double)?
        for place in uid.map({ places.visible(to: $0) }) ?? places.shared {
            let distance = place.coordinate.distance(to: point)
            if distance <= place.radius, distance < best?.distance ?? .infinity { best = (place.name, distance) }
        }
        return best?.name
    }

    func trip(_ found: TripSummary, visits: [Double: Visit]) -> Trip {
        var countries: [String] = []
        if let describer {
            for sample in found.samples {
                guard
                    let code = describer.countryCode(
                        Coordinate(latitude: sample.latitude, longitude: sample.longitude)),
                    countries.last != code
                else { continue }
                countries.append(code)
            }
        }
        return Trip(
            start: TimelineFix.fixTime(found.start), end: TimelineFix.fixTime(found.end),
            from: found.from.flatMap { visits[$0] }, to: found.to.flatMap { visits[$0] }, distance: found.distance,
            movingTime: found.movingTime, maxSpeed: found.maxSpeed, countries: countries,
            unknownPath: found.unknownPath)
    }
}
