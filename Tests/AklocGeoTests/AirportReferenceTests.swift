import AklocGeo
import Foundation
import Testing

/// Reverse geocoding against an independent reference: airports
/// (Tests/Fixtures/geo/airports.csv, from PyPI `airportsdata`, MIT) with
/// the city and country their own maintainers give. An airport is usually a
/// few km outside its city, so the check is statistical: how often the
/// nearest place is near, in the airport's country, in its time zone, and
/// named as its city. The rates are printed for docs/geodata.md.
@Suite struct AirportReferenceTests {
    @Test func nearestPlacesAgreeWithAirportCitiesAndCountries() throws {
        let airports = try GeoFixtures.csv("Tests/Fixtures/geo/airports.csv")
        #expect(airports.count > 5000)
        let gazetteer = GeoFixtures.gazetteer
        var within10 = 0
        var within25 = 0
        var sameCountry = 0
        var sameZone = 0
        var cityAmongNearby = 0
        var countryAware = 0
        for airport in airports {
            let point = Coordinate(latitude: Double(airport["latitude"]!)!, longitude: Double(airport["longitude"]!)!)
            let country = airport["country"]!
            guard let place = try gazetteer.nearest(to: point) else { continue }
            let distance = point.distance(to: place.coordinate)
            if distance <= 10_000 { within10 += 1 }
            if distance <= 25_000 { within25 += 1 }
            if place.countryCode == country { sameCountry += 1 }
            if place.timeZone == airport["tz"] { sameZone += 1 }
            // The airport's city among the places within 30 km (by any form of its name).
            let city = TextFolding.fold(airport["city"]!)
            let nearby = try gazetteer.places(within: 30_000, of: point)
            if nearby.contains(where: { TextFolding.fold($0.place.name) == city }) { cityAmongNearby += 1 }
            // Given the airport's country (as the borders lookup would), the place is in it.
            if let inCountry = try gazetteer.nearest(to: point, countryCode: country), inCountry.countryCode == country
            {
                countryAware += 1
            }
        }
        let n = Double(airports.count)
        func percent(_ k: Int) -> String { String(format: "%.1f %%", Double(k) / n * 100) }
        print(
            "airports \(airports.count): nearest place within 10 km \(percent(within10)), within 25 km \(percent(within25)),"
                + " same country \(percent(sameCountry)), same time zone \(percent(sameZone)),"
                + " city named within 30 km \(percent(cityAmongNearby)), in-country lookup found \(percent(countryAware))"
        )
        // Floors a little below the measured rates (docs/geodata.md): a data
        // or index regression shows as a drop.
        #expect(Double(within25) / n > 0.75)
        #expect(Double(sameCountry) / n > 0.95)
        #expect(Double(sameZone) / n > 0.90)
        #expect(Double(cityAmongNearby) / n > 0.55)
        #expect(Double(countryAware) / n > 0.98)
    }
}
