import AklocCore
import AklocGeo
import AklocJSON
import AklocProtocol
import Foundation
import Testing

/// The composition the daemon serves: placemark + country + zone of a point,
/// and the wire forms, over the committed data and the system's tzdata.
@Suite struct GeoLookupsTests {
    static let lookups = GeoLookups(
        gazetteer: GeoFixtures.gazetteer, borders: BorderData.borders, zones: BorderData.zones,
        countries: CountryTableTests.table)

    static func rules(_ identifier: String) -> TimeZoneRules? {
        guard let data = FileManager.default.contents(atPath: "/usr/share/zoneinfo/\(identifier)") else { return nil }
        return data.withUnsafeBytes { try? TimeZoneRules($0) }
    }

    /// 2026-07-01 12:00 and 2026-01-15 12:00 UTC.
    static let july: Int64 = 1_782_907_200
    static let january: Int64 = 1_768_478_400

    @Test func theIJsselmeerIsNearAndijkInNorthHolland() throws {
        let point = Coordinate(latitude: 52.850156667, longitude: 5.31362)
        let summer = try Self.lookups.describe(point, at: Self.july, rules: Self.rules)
        #expect(summer.placemark.formattedAddress == "13 km NE of Andijk, North Holland, Netherlands")
        #expect(summer.country?.code == "NL" && summer.country?.phoneCode == "+31")
        #expect(summer.placemark.timeZone == "Europe/Amsterdam")
        #expect(summer.timeZone?.abbreviation == "CEST" && summer.timeZone?.secondsFromGMT == 7200)
        let winter = try Self.lookups.describe(point, at: Self.january, rules: Self.rules)
        #expect(winter.timeZone?.abbreviation == "CET" && winter.timeZone?.secondsFromGMT == 3600)
        #expect(winter.placemark == summer.placemark)
    }

    /// Across a border the locality is the nearest place of the point's own
    /// country, even where one across the border is nearer.
    @Test func theLocalityIsInThePointsCountry() throws {
        // Kerkrade (NL) and Herzogenrath (DE) share a street; a point in
        // each, a few hundred metres from the border.
        let dutch = try Self.lookups.describe(
            Coordinate(latitude: 50.8660, longitude: 6.0630), at: Self.july, rules: Self.rules)
        let german = try Self.lookups.describe(
            Coordinate(latitude: 50.8700, longitude: 6.1000), at: Self.july, rules: Self.rules)
        #expect(dutch.country?.code == "NL" && dutch.placemark.isoCountryCode == "NL", "\(dutch)")
        #expect(german.country?.code == "DE" && german.placemark.isoCountryCode == "DE", "\(german)")
        let dutchPlace = try #require(dutch.placemark.locality)
        let germanPlace = try #require(german.placemark.locality)
        #expect(dutchPlace != germanPlace)
        #expect(german.timeZone?.identifier == "Europe/Berlin")
    }

    @Test func farAtSeaThereIsNoCountry() throws {
        let atlantic = try Self.lookups.describe(
            Coordinate(latitude: 50, longitude: -30), at: Self.july, rules: Self.rules)
        #expect(atlantic.country == nil)
        #expect(atlantic.placemark.isoCountryCode == nil && atlantic.placemark.country == nil)
        #expect(atlantic.placemark.locality != nil, "the nearest place still names the area")
        #expect(atlantic.timeZone?.identifier == "Etc/GMT+2" && atlantic.timeZone?.secondsFromGMT == -7200)
        let wire = GeoWire.placemark(atlantic.placemark, timeZone: atlantic.timeZone)
        #expect(wire["isoCountryCode"] == nil && wire["country"] == nil)
    }

    @Test func outOfRangeCoordinatesNameTheField() {
        for point in [
            Coordinate(latitude: 90.5, longitude: 0), Coordinate(latitude: 0, longitude: -181),
            Coordinate(latitude: .nan, longitude: 0),
        ] {
            #expect(throws: GeoQueryError.self) {
                try Self.lookups.describe(point, at: 0, field: "near", rules: Self.rules)
            }
            do {
                _ = try Self.lookups.describe(point, at: 0, field: "near", rules: Self.rules)
            } catch let error as GeoQueryError {
                #expect(error.field == "near" && error.code == .badCoordinate)
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func wireForms() throws {
        let point = Coordinate(latitude: 52.72, longitude: 5.33)
        let described = try Self.lookups.describe(point, at: Self.july, rules: Self.rules)
        let values = GeoWire.keyPathValues(described)
        let placemark = try #require(values.placemark.objectValue)
        #expect(placemark["locality"] == "Enkhuizen")
        #expect(placemark["formattedAddress"] == "3 km NE of Enkhuizen, North Holland, Netherlands")
        #expect(placemark["distance"]?.doubleValue == placemark["distance"]?.doubleValue?.rounded())
        #expect(placemark["timeZone"]?["secondsFromGMT"] == 7200)
        #expect(placemark["coordinate"]?["latitude"]?.doubleValue ?? 0 > 52.6)
        #expect(values.country["flag"] == "🇳🇱" && values.country["alpha3"] == "NLD")
        #expect(values.country["localizedName"] == nil, "only when a locale asks for it")
        #expect(values.timeZone["identifier"] == "Europe/Amsterdam")
        // Search results are places seen from `near`, with their country's name.
        let found = try Self.lookups.search("enkh", near: point, within: 10_000, limit: 3)
        #expect(found.first?.locality == "Enkhuizen" && found.first?.country == "Netherlands")
        #expect(try Self.lookups.search("enkh", near: nil, within: 0, limit: 3).first?.distance == nil)
    }
}
