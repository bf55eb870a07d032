import AklocCore
import AklocPosix
import AklocTestSupport
import Glibc
import Testing

@testable import AklocDaemon

@Suite struct StateStoreTests {
    private let sample = PersistentState(
        paused: true,
        lastLocation: Location(
            latitude: 52.52, longitude: 13.405, mode: .threeD, altitude: 34.5, horizontalAccuracy: 4.2, speed: 1.25,
            course: 270, timestamp: FixTime(secondsSince1970: 1_796_050_000, nanoseconds: 250_000_000),
            receivedAt: FixTime(secondsSince1970: 1_796_050_001), device: "/dev/ttyACM0"),
        authorizationDecisions: [1000: .authorizedWhenInUse, 1001: .denied, 4_000_000_000: .authorizedAlways])

    @Test func roundTrip() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        let store = StateStore(directory: directory + "/state")
        try store.save(sample)
        let loaded = try store.load()
        #expect(loaded.state == sample)
        #expect(loaded.warning == nil)
        #expect(loaded.fileExisted)
        #expect(fileMode(store.path) == 0o600)
        #expect(directoryEntries(directory + "/state") == ["state.json"], "no temp file left behind")
        let text = try #require(readFile(store.path))
        #expect(text.contains("\"version\" : 1"))
        #expect(text.contains("\"1000\" : \"authorizedWhenInUse\""))

        var changed = sample
        changed.paused = false
        changed.lastLocation = nil
        try store.save(changed)
        #expect(try store.load().state == changed)
    }

    @Test func missingFileAndDirectoryMeanFreshState() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        let store = StateStore(directory: directory + "/var-lib-akloc")
        let loaded = try store.load()
        #expect(loaded.state == PersistentState())
        #expect(!loaded.fileExisted)
        #expect(loaded.warning == nil)
        #expect(fileMode(store.directory) == 0o700, "created private, whatever the umask")
    }

    @Test func existingDirectoryKeepsItsMode() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        chmod(directory, 0o750)
        _ = try StateStore(directory: directory).load()
        #expect(fileMode(directory) == 0o750)
    }

    @Test(arguments: [
        ("truncated", nil as String?), ("empty", ""), ("garbage", "\u{7F}ELF not json"),
        ("wrong type", #"{"version":1,"paused":"yes","authorizationDecisions":{}}"#),
        ("bad uid", #"{"version":1,"paused":false,"authorizationDecisions":{"alice":"denied"}}"#),
        ("bad status", #"{"version":1,"paused":false,"authorizationDecisions":{"1000":"maybe"}}"#),
    ])
    func corruptFileIsMovedAside(name: String, content: String?) throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        let store = StateStore(directory: directory)
        if let content {
            writeFile(store.path, content)
        } else {
            try store.save(sample)
            let full = try #require(readFile(store.path))
            writeFile(store.path, String(full.prefix(full.count / 2)))
        }
        let before = readFile(store.path)
        // 2026-11-30T15:14:11Z
        let loaded = try store.load(now: 1_796_051_651)
        #expect(loaded.state == PersistentState(), "\(name)")
        let warning = try #require(loaded.warning)
        #expect(warning.code == .corrupt)
        #expect(warning.movedTo == store.path + ".corrupt-20261130T151411Z")
        #expect(warning.message.contains("starting with a clean state"))
        #expect(readFile(warning.movedTo) == before, "the bad file is kept as it was")
        #expect(directoryEntries(directory) == ["state.json.corrupt-20261130T151411Z"])

        // The daemon then starts clean and saves over nothing of value.
        try store.save(PersistentState())
        #expect(try store.load().warning == nil)
    }

    @Test func earlierCasualtiesAreNotOverwritten() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        let store = StateStore(directory: directory)
        writeFile(store.path, "{")
        _ = try store.load(now: 1_796_051_651)
        writeFile(store.path, "[")
        let second = try store.load(now: 1_796_051_651)
        #expect(second.warning?.movedTo == store.path + ".corrupt-20261130T151411Z.1")
        #expect(readFile(store.path + ".corrupt-20261130T151411Z") == "{")
    }

    @Test func newerFormatIsMovedAsideWithItsOwnCode() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        let store = StateStore(directory: directory)
        writeFile(store.path, #"{"version":2,"paused":true}"#)
        let loaded = try store.load()
        #expect(loaded.warning?.code == .unsupportedVersion)
        #expect(loaded.warning?.message.contains("format version 2") == true)
        #expect(loaded.state == PersistentState())
    }

    @Test func unusableDirectoryIsAnError() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        writeFile(directory + "/file", "x")
        #expect(throws: StateStoreError.self) { try StateStore(directory: directory + "/file").load() }
        do {
            try StateStore(directory: directory + "/file/sub").save(sample)
            Issue.record("saved")
        } catch {
            #expect(error.code == .directoryUnavailable)
            #expect(error.errno?.name == "ENOTDIR")
        }
    }
}
