import AklocGeo
import Testing

@Suite struct CountryBordersTests {
    let borders = BorderData.borders

    func code(_ latitude: Double, _ longitude: Double) throws -> String? {
        try borders.country(at: Coordinate(latitude: latitude, longitude: longitude))?.code
    }

    @Test func agreesWithTheAirportsReference() throws {
        var agree = 0
        var disagreements: [String: Int] = [:]
        for airport in BorderData.airports {
            let found = try borders.country(at: airport.coordinate)?.code ?? "none"
            if found == airport.country {
                agree += 1
            } else {
                disagreements["\(airport.country)->\(found)", default: 0] += 1
            }
        }
        let rate = Double(agree) / Double(BorderData.airports.count)
        print("country agreement \(agree)/\(BorderData.airports.count) = \(rate)")
        print(disagreements.sorted { $0.value > $1.value }.prefix(40))
        #expect(rate >= 0.995)
    }
}
