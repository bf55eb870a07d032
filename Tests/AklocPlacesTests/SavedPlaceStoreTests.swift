import AklocCore
import AklocGeo
import AklocPosix
import AklocTestSupport
import Glibc
import Testing

@testable import AklocPlaces

@Suite struct SavedPlaceStoreTests {
    let t0 = FixTime(secondsSince1970: 1_800_000_000)

    func place(_ name: String, owner: UInt32, shared: Bool = false) throws -> SavedPlace {
        try SavedPlace(
            name: name, coordinate: Coordinate(latitude: 52.7, longitude: 5.29), owner: owner, createdAt: t0,
            note: owner == 0 ? "admin's" : nil, shared: shared)
    }

    @Test func eachOwnerHasAFileWrittenAtomicallyAndReadBack() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        let store = SavedPlaceStore(stateDirectory: directory + "/state")
        try store.save([place("Home", owner: 1000), place("Work", owner: 1000)], of: 1000)
        try store.save([place("Depot", owner: 0, shared: true)], of: 0)
        #expect(directoryEntries(store.directory) == ["0.json", "1000.json"], "no temp file left behind")
        #expect(fileMode(store.path(of: 1000)) == 0o600)
        let loaded = try store.load()
        #expect(loaded.warnings.isEmpty)
        #expect(loaded.places.owned(by: 1000).map(\.name) == ["Home", "Work"])
        #expect(loaded.places.owned(by: 0) == [try place("Depot", owner: 0, shared: true)])
        // Deleting an owner's last place removes the file.
        try store.save([], of: 1000)
        #expect(directoryEntries(store.directory) == ["0.json"])
        #expect(try store.load().places.owned(by: 1000).isEmpty)
    }

    @Test(arguments: [
        "", "{", "[]", "{\"version\":2,\"owner\":1000,\"places\":[]}", "{\"version\":1,\"owner\":1001,\"places\":[]}",
        "{\"version\":1,\"owner\":1000,\"places\":[{\"name\":\"a\"}]}",
        "{\"version\":1,\"owner\":1000,\"places\":[{\"name\":\"\u{7}\",\"coordinate\":{\"latitude\":1,\"longitude\":1},\"radius\":5,\"owner\":1000,\"createdAt\":\"2027-01-15T08:00:00Z\"}]}",
    ])
    func aBadFileIsMovedAsideAndOnlyItsOwnerLosesPlaces(content: String) throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        let store = SavedPlaceStore(stateDirectory: directory)
        try store.save([place("Depot", owner: 0, shared: true)], of: 0)
        writeFile(store.path(of: 1000), content, mode: 0o600)
        let loaded = try store.load(now: 1_800_000_000)
        #expect(loaded.places.owned(by: 1000).isEmpty)
        #expect(loaded.places.owned(by: 0).count == 1, "another owner's file is untouched")
        let warning = try #require(loaded.warnings.first)
        #expect(loaded.warnings.count == 1)
        #expect(warning.movedTo == store.path(of: 1000) + ".corrupt-20270115T080000Z")
        #expect(warning.message.contains("moved it to"))
        #expect(readFile(warning.movedTo) == content, "the bad file is kept for the administrator")
        // A second bad file the same second does not overwrite the first.
        writeFile(store.path(of: 1000), "junk", mode: 0o600)
        let again = try store.load(now: 1_800_000_000)
        #expect(again.warnings.first?.movedTo == warning.movedTo + ".1")
    }

    @Test func filesThatAreNotAnOwnersAreIgnored() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        let store = SavedPlaceStore(stateDirectory: directory)
        try store.save([place("Home", owner: 5)], of: 5)
        writeFile(store.directory + "/notes.txt", "x")
        writeFile(store.directory + "/05.json", "x")
        writeFile(store.directory + "/5.json.corrupt-20270115T080000Z", "x")
        let loaded = try store.load()
        #expect(loaded.warnings.isEmpty)
        #expect(loaded.places.byOwner.keys.sorted() == [5])
    }
}
