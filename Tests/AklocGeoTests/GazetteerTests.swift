import AklocCore
import Foundation
import Testing

@testable import AklocGeo

/// Nearest place and radius queries on the committed data/places.bin,
/// checked against brute force over every record (Foundation's trigonometry,
/// not the k-d tree or AklocCore's), and reverse geocoding of real tracks.
@Suite struct GazetteerTests {
    static let gazetteer = GeoFixtures.gazetteer

    /// Every record once: coordinates, unit vectors (Foundation), countries.
    struct Everything {
        var coordinates: [Coordinate] = []
        var vectors: [(Double, Double, Double)] = []
        var countries: [String] = []
    }

    static let everything: Everything = {
        var all = Everything()
        for index in 0..<gazetteer.count {
            let coordinate = try! gazetteer.coordinate(at: index)
            all.coordinates.append(coordinate)
            all.vectors.append(vector(coordinate))
            all.countries.append(try! gazetteer.countryCode(at: index))
        }
        return all
    }()

    static func vector(_ c: Coordinate) -> (Double, Double, Double) {
        let phi = c.latitude * .pi / 180
        let lambda = c.longitude * .pi / 180
        return (cos(phi) * cos(lambda), cos(phi) * sin(lambda), sin(phi))
    }

    /// The nearest record by chord length, optionally in one country.
    static func bruteNearest(_ point: Coordinate, country: String? = nil) -> Int? {
        let q = vector(point)
        var best = -1
        var bestSquared = Double.infinity
        let all = everything
        for i in 0..<all.vectors.count {
            if let country, all.countries[i] != country { continue }
            let v = all.vectors[i]
            let squared = (q.0 - v.0) * (q.0 - v.0) + (q.1 - v.1) * (q.1 - v.1) + (q.2 - v.2) * (q.2 - v.2)
            if squared < bestSquared {
                bestSquared = squared
                best = i
            }
        }
        return best < 0 ? nil : best
    }

    @Test func theFileHoldsCities5000() throws {
        #expect(Self.gazetteer.count > 60_000)
        let first = try Self.gazetteer.place(at: 0)
        #expect(!first.name.isEmpty)
    }

    @Test func nearestMatchesBruteForceForRandomPoints() throws {
        var random = GeoFixtures.Random(seed: 11)
        var points: [Coordinate] = []
        for _ in 0..<1500 { points.append(GeoFixtures.randomPoint(&random)) }
        // Points near places, where neighbours are dense and ties close.
        for _ in 0..<1500 {
            let base = Self.everything.coordinates[Int.random(in: 0..<Self.gazetteer.count, using: &random)]
            points.append(
                Coordinate(
                    latitude: max(-90, min(90, base.latitude + Double.random(in: -0.2...0.2, using: &random))),
                    longitude: max(-180, min(180, base.longitude + Double.random(in: -0.2...0.2, using: &random)))))
        }
        // Poles and the antimeridian.
        points += [
            Coordinate(latitude: 90, longitude: 0), Coordinate(latitude: -90, longitude: 0),
            Coordinate(latitude: 0, longitude: 180), Coordinate(latitude: 0, longitude: -180),
            Coordinate(latitude: -16.5, longitude: 179.99), Coordinate(latitude: 64.7, longitude: -180),
        ]
        var mismatches = 0
        for point in points {
            let found = try #require(try Self.gazetteer.nearest(to: point))
            let expected = try #require(Self.bruteNearest(point))
            let foundDistance = point.distance(to: found.coordinate)
            let expectedDistance = point.distance(to: Self.everything.coordinates[expected])
            // The tree keeps Float vectors: a different place is right only if it is as near.
            if found.index != expected, abs(foundDistance - expectedDistance) > 1 { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }

    @Test func nearestInACountryMatchesBruteForce() throws {
        var random = GeoFixtures.Random(seed: 12)
        for _ in 0..<300 {
            let anchor = Int.random(in: 0..<Self.gazetteer.count, using: &random)
            let country = Self.everything.countries[anchor]
            let base = Self.everything.coordinates[anchor]
            let point = Coordinate(
                latitude: max(-90, min(90, base.latitude + Double.random(in: -1...1, using: &random))),
                longitude: max(-180, min(180, base.longitude + Double.random(in: -1...1, using: &random))))
            let found = try #require(try Self.gazetteer.nearest(to: point, countryCode: country.lowercased()))
            let expected = try #require(Self.bruteNearest(point, country: country))
            #expect(found.countryCode == country)
            let delta = point.distance(to: found.coordinate) - point.distance(to: Self.everything.coordinates[expected])
            #expect(found.index == expected || abs(delta) <= 1)
        }
        #expect(try Self.gazetteer.nearest(to: Coordinate(latitude: 0, longitude: 0), countryCode: "QQ") == nil)
    }

    @Test func placesWithinARadiusMatchBruteForce() throws {
        var random = GeoFixtures.Random(seed: 13)
        for _ in 0..<150 {
            let base = Self.everything.coordinates[Int.random(in: 0..<Self.gazetteer.count, using: &random)]
            let point = Coordinate(
                latitude: max(-90, min(90, base.latitude + Double.random(in: -0.1...0.1, using: &random))),
                longitude: base.longitude)
            let radius = [1_000.0, 10_000, 50_000].randomElement(using: &random)!
            let found = try Self.gazetteer.places(within: radius, of: point).map(\.place.index)
            let expected = Self.everything.coordinates.indices.filter {
                point.distance(to: Self.everything.coordinates[$0]) <= radius
            }
            #expect(Set(found) == Set(expected))
            let distances = try Self.gazetteer.places(within: radius, of: point).map(\.distance)
            #expect(distances == distances.sorted())
        }
    }

    /// The index was folded by scripts/geodata/folding.py; queries are folded
    /// here. They must agree on every name in the file.
    @Test func swiftFoldingAgreesWithTheIndexOnEveryName() throws {
        var disagreements: [String] = []
        for index in 0..<Self.gazetteer.count {
            let place = try Self.gazetteer.place(at: index)
            let folded = try Self.gazetteer.foldedName(at: index)
            if TextFolding.fold(place.name) != folded { disagreements.append("\(place.name) -> \(folded)") }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
    }

    @Test func placemarkOnTheIJsselmeerBoatTrip() throws {
        // The bundg_zeus_9 capture: a boat off Enkhuizen.
        let track = try GeoFixtures.csv("Tests/Fixtures/geo/ijsselmeer-track.csv")
        #expect(track.count > 1000)
        for row in track.enumerated().filter({ $0.offset % 100 == 0 }).map(\.element) {
            let point = Coordinate(latitude: Double(row["latitude"]!)!, longitude: Double(row["longitude"]!)!)
            let placemark = try Self.gazetteer.placemark(at: point, country: ("NL", "Netherlands"))
            #expect(["Enkhuizen", "Andijk"].contains(placemark.locality ?? ""), "\(placemark)")
            #expect(placemark.administrativeArea == "North Holland")
            #expect(placemark.isoCountryCode == "NL")
            #expect(placemark.timeZone == "Europe/Amsterdam")
            // The track is on the water, 12.7–13.1 km from the nearest of them.
            #expect((placemark.distance ?? .infinity) < 15_000)
        }
        let first = track[0]
        let point = Coordinate(latitude: Double(first["latitude"]!)!, longitude: Double(first["longitude"]!)!)
        let placemark = try Self.gazetteer.placemark(at: point, country: ("NL", "Netherlands"))
        // Andijk is 13.0 km away, the point 11.5 km north and 6.1 km east of it.
        #expect(placemark.formattedAddress == "13 km NE of Andijk, North Holland, Netherlands")
    }

    @Test func placemarkWithoutACountryOrInACountryWithoutPlaces() throws {
        let zurich = Coordinate(latitude: 47.3769, longitude: 8.5417)
        let placemark = try Self.gazetteer.placemark(at: zurich)
        // GeoNames lists Zürich's districts as places of their own.
        #expect(placemark.locality?.hasPrefix("Zürich") == true)
        #expect(placemark.isoCountryCode == "CH")
        #expect(placemark.administrativeArea == "Zurich")
        #expect(placemark.formattedAddress.hasSuffix(", Zurich, CH"))
        let nowhere = try Self.gazetteer.placemark(at: zurich, country: ("QQ", nil))
        #expect(nowhere.locality == nil && nowhere.isoCountryCode == "QQ")
        #expect(nowhere.formattedAddress == "QQ")
        // A country without places is remembered as such (the search that
        // finds none visits every record); the answers stay the same.
        let pole = Coordinate(latitude: -85, longitude: 40)
        for _ in 0..<2 {
            #expect(try Self.gazetteer.nearest(to: pole, countryCode: "AQ") == nil)
            #expect(try Self.gazetteer.nearest(to: pole, countryCode: "ZA")?.countryCode == "ZA")
            #expect(try Self.gazetteer.placemark(at: pole, country: ("AQ", "Antarctica")).locality == nil)
        }
    }

    @Test func badCoordinatesAndCountryCodesAreRefused() {
        let bad = [
            Coordinate(latitude: .nan, longitude: 0), Coordinate(latitude: 0, longitude: .infinity),
            Coordinate(latitude: 90.0001, longitude: 0), Coordinate(latitude: 0, longitude: -180.5),
        ]
        for point in bad {
            #expect(throws: GeoQueryError.self) { try Self.gazetteer.nearest(to: point) }
            #expect(throws: GeoQueryError.self) { try Self.gazetteer.placemark(at: point) }
            #expect(throws: GeoQueryError.self) { try Self.gazetteer.places(within: 10, of: point) }
        }
        let origin = Coordinate(latitude: 0, longitude: 0)
        for code in ["", "N", "NLD", "1A", "é1"] {
            #expect(throws: GeoQueryError.self) { try Self.gazetteer.nearest(to: origin, countryCode: code) }
        }
        for radius in [-1, .nan, .infinity, 2_000_000] {
            #expect(throws: GeoQueryError.self) { try Self.gazetteer.places(within: radius, of: origin) }
        }
    }
}
