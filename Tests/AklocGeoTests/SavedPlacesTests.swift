import AklocCore
import AklocGeo
import AklocJSON
import AklocProtocol
import Testing

@Suite struct SavedPlacesTests {
    let here = Coordinate(latitude: 52.7033, longitude: 5.2917)
    let t0 = FixTime(secondsSince1970: 1_800_000_000)

    func place(_ name: String, owner: UInt32, shared: Bool = false, radius: Double = 100, at time: FixTime? = nil)
        throws -> SavedPlace
    {
        try SavedPlace(
            name: name, coordinate: here, radius: radius, owner: owner, createdAt: time ?? t0, shared: shared)
    }

    @Test func savingANameAgainReplacesItAndKeepsItsCreationTime() throws {
        var places = SavedPlaces()
        try places.save(place("Haven", owner: 1000))
        try places.save(place("Dock", owner: 1000))
        let later = FixTime(secondsSince1970: t0.secondsSince1970 + 60)
        let stored = try places.save(place("Haven", owner: 1000, radius: 250, at: later))
        #expect(stored.radius == 250)
        #expect(stored.createdAt == t0, "OwnTracks names a waypoint by its creation time")
        #expect(places.owned(by: 1000).map(\.name) == ["Haven", "Dock"], "a replaced place keeps its slot")
        #expect(places.owned(by: 1000).first?.radius == 250)
    }

    @Test func namesAreUniquePerOwnerNotAcrossOwners() throws {
        var places = SavedPlaces()
        try places.save(place("Home", owner: 1000))
        try places.save(place("Home", owner: 1001))
        #expect(places.owned(by: 1000).count == 1 && places.owned(by: 1001).count == 1)
        #expect(places.visible(to: 1000).map(\.owner) == [1000], "another user's private place is not visible")
    }

    @Test func theThousandAndFirstPlaceIsRefusedAndNothingChanges() throws {
        var places = SavedPlaces()
        for index in 0..<SavedPlace.maxPerOwner { try places.save(place("p\(index)", owner: 7)) }
        let before = places
        do {
            try places.save(place("one too many", owner: 7))
            Issue.record("a 1001st place was saved")
        } catch let error as GeoQueryError {
            #expect(error.code == .tooManyPlaces && error.field == "name")
        }
        #expect(places == before)
        // Replacing one is still fine at the limit, and others have their own limit.
        try places.save(place("p0", owner: 7, radius: 5))
        try places.save(place("p0", owner: 8))
        #expect(places.owned(by: 7).count == SavedPlace.maxPerOwner)
    }

    @Test func sharedPlacesAreVisibleToEveryoneAfterTheirOwn() throws {
        var places = SavedPlaces()
        try places.save(place("Depot", owner: 0, shared: true))
        try places.save(place("Admin only", owner: 0))
        try places.save(place("Home", owner: 1000))
        #expect(places.visible(to: 1000).map(\.name) == ["Home", "Depot"])
        #expect(places.visible(to: 0).map(\.name) == ["Depot", "Admin only"])
        #expect(places.shared.map(\.name) == ["Depot"])
    }

    @Test func monitoringResolvesNamesOwnPlacesShadowSharedOnes() throws {
        var places = SavedPlaces()
        try places.save(place("Depot", owner: 0, shared: true, radius: 500))
        try places.save(place("Depot", owner: 1000, radius: 50))
        try places.save(place("Home", owner: 1000))
        let all = places.monitored(by: 1000, names: nil)
        #expect(all.places.map(\.name) == ["Depot", "Home"] && all.missing.isEmpty)
        #expect(all.places.first?.radius == 50, "the caller's own Depot wins")
        let some = places.monitored(by: 1000, names: ["Home", "Nowhere", "Home"])
        #expect(some.places.map(\.name) == ["Home"])
        #expect(some.missing == ["Nowhere"])
        #expect(places.monitored(by: 1001, names: nil).places.map(\.radius) == [500])
    }

    @Test func removeIsPerOwner() throws {
        var places = SavedPlaces()
        try places.save(place("Home", owner: 1000))
        #expect(places.remove(name: "Home", owner: 1001) == nil)
        #expect(places.remove(name: "Home", owner: 1000)?.name == "Home")
        #expect(places.remove(name: "Home", owner: 1000) == nil)
        #expect(places.byOwner.isEmpty)
    }

    @Test func jsonRoundTripsAndChecksEveryRuleOnTheWayIn() throws {
        let original = try SavedPlace(
            name: "Café \"Zuid\"", coordinate: here, radius: 12.5, owner: 1000, createdAt: t0, note: "line\u{2028}two",
            shared: true)
        var writer = JSONWriter()
        original.write(to: &writer)
        let parsed = try JSONValue.parse(writer.bytes).get()
        #expect(try SavedPlace(json: parsed) == original)
        // Members in sorted order, as JSONWriter writes any object.
        var sorted = JSONWriter()
        sorted.value(parsed)
        #expect(sorted.bytes == writer.bytes)

        func refused(_ change: (inout [String: JSONValue]) -> Void) -> String? {
            var members = parsed.objectValue!
            change(&members)
            do {
                _ = try SavedPlace(json: .object(members))
                return nil
            } catch {
                return error.field
            }
        }
        #expect(refused { $0["name"] = .string(String(repeating: "x", count: 65)) } == "name")
        #expect(refused { $0["name"] = .int(3) } == "name")
        #expect(refused { $0["radius"] = .int(0) } == "radius")
        #expect(refused { $0["radius"] = .string("100") } == "radius")
        #expect(refused { $0["coordinate"] = .object(["latitude": .int(91), "longitude": .int(0)]) } == "coordinate")
        #expect(refused { $0["coordinate"] = .object(["latitude": .int(1)]) } == "coordinate.longitude")
        #expect(refused { $0["owner"] = .int(-1) } == "owner")
        #expect(refused { $0["createdAt"] = .string("yesterday") } == "createdAt")
        #expect(refused { $0["note"] = .string("bell\u{7}") } == "note")
    }
}
