import AklocCore
import AklocGeo
import Testing

@Suite struct SavedPlaceTests {
    let home = Coordinate(latitude: 52.7033, longitude: 5.2917)
    let now = FixTime(secondsSince1970: 1_800_000_000)

    func code(_ body: () throws(GeoQueryError) -> SavedPlace) -> (GeoQueryError.Code, String)? {
        do {
            _ = try body()
            return nil
        } catch {
            return (error.code, error.field)
        }
    }

    @Test func validPlacesKeepTheirValuesAndDefaults() throws {
        let place = try SavedPlace(name: "Haven", coordinate: home, owner: 1000, createdAt: now)
        #expect(place.radius == 100)
        #expect(place.note == nil && !place.shared)
        let full = try SavedPlace(
            name: String(repeating: "é", count: 64), coordinate: Coordinate(latitude: -90, longitude: 180),
            radius: 100_000, owner: 0, createdAt: now, note: "", shared: true)
        #expect(full.name.count == 64 && full.shared)
        _ = try SavedPlace(name: "x", coordinate: home, radius: 1, owner: 1, createdAt: now, note: "café ☕")
    }

    func make(
        name: String = "a", coordinate: Coordinate? = nil, radius: Double = 100, note: String? = nil
    ) -> (GeoQueryError.Code, String)? {
        code { () throws(GeoQueryError) in
            try SavedPlace(
                name: name, coordinate: coordinate ?? home, radius: radius, owner: 1, createdAt: now, note: note)
        }
    }

    @Test func badNamesRadiiNotesAndCoordinatesAreRefusedByField() {
        let cases: [((GeoQueryError.Code, String)?, GeoQueryError.Code, String)] = [
            (make(name: ""), .emptyName, "name"),
            (make(name: "   "), .emptyName, "name"),
            (make(name: String(repeating: "a", count: 65)), .nameTooLong, "name"),
            (make(name: "a\u{7}b"), .controlCharacter, "name"),
            (make(name: "line\nbreak"), .controlCharacter, "name"),
            (make(coordinate: Coordinate(latitude: 91, longitude: 0)), .badCoordinate, "coordinate"),
            (make(coordinate: Coordinate(latitude: 0, longitude: .nan)), .badCoordinate, "coordinate"),
            (make(radius: 0), .badRadius, "radius"),
            (make(radius: -5), .badRadius, "radius"),
            (make(radius: 100_001), .badRadius, "radius"),
            (make(radius: .nan), .badRadius, "radius"),
            (make(note: String(repeating: "n", count: 1025)), .noteTooLong, "note"),
            (make(note: "\u{1B}[31m"), .controlCharacter, "note"),
        ]
        for (got, expected, field) in cases {
            #expect(got?.0 == expected && got?.1 == field, "\(expected) \(field): \(String(describing: got))")
        }
    }
}
