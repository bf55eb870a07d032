import AklocCore
import AklocFeature
import AklocJSON
import AklocPosix
import AklocProtocol
import AklocTestSupport
import AklocTrack
import Testing

/// An imported point `seconds` after `dayOne`, at `index` steps east.
private func imported(_ seconds: Int64, index: Int = 0, segment: Int64 = 0) -> ImportPoint {
    ImportPoint(
        time: at(seconds), latitude: 48.85, longitude: 2.35 + Double(index) * 0.0001, altitude: 35,
        horizontalAccuracy: 12, segment: segment)
}

/// The same point as the store gives it back.
private func stored(_ point: ImportPoint) -> TrackPoint.Key {
    TrackPoint.Key(time: point.time, latitude: point.latitude, longitude: point.longitude)
}

extension TrackPoint {
    /// What an import keeps of a point, to compare.
    struct Key: Hashable {
        var time: FixTime
        var latitude: Double
        var longitude: Double
    }

    var key: Key { Key(time: location.timestamp!, latitude: location.latitude, longitude: location.longitude) }
}

@Suite struct TrackImportMergeTests {
    @Test func importedPointsGoInByTimeAndDuplicatesAreSkipped() {
        let existing = [
            point(0, segment: 3, index: 0), point(100, segment: 3, index: 1), point(200, segment: 4, index: 2),
        ]
        var records = existing.map(TrackRecord.encode)
        records.insert(TrackRecord.header(id: 7), at: 0)
        records.insert(Array("9,unknown,version".utf8), at: 2)
        func staged(_ seconds: Int64, _ latitude: Double, _ longitude: Double, file segment: Int64 = 0)
            -> ImportPoint
        {
            ImportPoint(time: at(seconds), latitude: latitude, longitude: longitude, segment: segment)
        }
        let again = existing[1].location
        var segmenter = ImportSegmenter(first: 100, limit: 110)
        let result = TrackImportMerge.merge(
            existing: records,
            staged: [
                staged(150, 1, 1), staged(50, 2, 2), staged(100, again.latitude, again.longitude),
                staged(150, 1, 1), staged(5000, 3, 3), staged(5001, 3, 3, file: 1),
            ], segmenter: &segmenter)
        #expect(result.imported == 4)
        #expect(result.skipped == 2, "one already recorded, one twice in the import")
        let decoded = result.records.map { TrackRecord.decode($0) }
        #expect(decoded.count == 8)
        #expect(decoded[0] == existing[0])
        #expect(
            result.records[1] == Array("9,unknown,version".utf8), "a record this version cannot read keeps its place")
        #expect(decoded[2]?.location.latitude == 2 && decoded[2]?.segment == 100)
        #expect(decoded[3] == existing[1])
        #expect(decoded[4]?.location.latitude == 1 && decoded[4]?.segment == 100, "within 600 s: one segment")
        #expect(decoded[5] == existing[2])
        #expect(decoded[6]?.location.latitude == 3 && decoded[6]?.segment == 101, "after a gap: a new segment")
        #expect(decoded[7]?.segment == 102, "the file's own segment starts a new one")
    }
}

@Suite struct TrackImportTests {
    let scratch = TrackScratch()
    /// dayOne plus 3 days: the retention of 30 days takes all of these.
    let now = at(3 * 86_400)

    func opened(maxSize: Int = 64 << 20) throws -> TrackStore {
        let store = scratch.store(maxSize: maxSize)
        _ = try store.open(now: now)
        return store
    }

    func importer(_ store: TrackStore, first: UInt64 = 1000) throws -> TrackImport {
        try TrackImport(store: store) { _ in first }
    }

    func stagingDirectories() throws -> [String] {
        try FileSystem.entries(of: scratch.directory).filter { $0.hasPrefix(TrackImport.directoryPrefix) }
    }

    @Test func pointsOfSeveralDaysInterleaveWithTheRecordedOnesInABoundedNumberOfSteps() throws {
        let store = try opened()
        let recorded = [point(3600, index: 0), point(7200, index: 1), point(86_400 + 60, index: 2)]
        for point in recorded { try store.append(point, now: now) }
        store.close()
        let file = (0..<300).map { imported(Int64($0) * 600 + 1800, index: $0) }
        let importer = try importer(store)
        // Out of order, as a Timeline.json's raw signals come after its segments.
        for batch in [Array(file[150...]), Array(file[..<150])] { try importer.add(batch, now: now) }
        #expect(try stagingDirectories().count == 1)
        #expect(try store.all() == recorded, "nothing shows before the commit")
        var steps = 0
        var progress = TrackImport.Progress()
        while !progress.done {
            progress = try importer.commitStep(budget: 100)
            steps += 1
        }
        #expect(steps >= 3, "a bounded step per request")
        #expect(progress.imported == 300 && progress.skipped == 0 && progress.days == 3)
        let all = try store.all()
        #expect(all.count == 303)
        #expect(Set(all.map(\.key)).isSuperset(of: file.map(stored)))
        let received = all.map { $0.location.receivedAt! }
        #expect(received == received.sorted(), "each day file stays in order of receipt")
        #expect(all.filter { $0.location.device == "import" }.allSatisfy { $0.segment >= 1000 })
        #expect(try stagingDirectories().isEmpty)

        // The same file again: everything skipped, nothing rewritten.
        let sizes = store.days
        let again = try self.importer(store)
        try again.add(file, now: now)
        while !progress.done || progress.imported != 0 {
            progress = try again.commitStep()
            if progress.done { break }
        }
        #expect(progress.imported == 0 && progress.skipped == 300)
        #expect(store.days == sizes)
    }

    @Test func smallStepsGiveTheSameJournalAsOneBigStep() throws {
        let other = TrackScratch()
        var results: [[TrackPoint]] = []
        for (scratch, budget) in [(scratch, 7), (other, 1_000_000)] {
            let store = scratch.store()
            _ = try store.open(now: now)
            // Recorded points with gaps the imported ones fall into, and runs between them.
            for index in 0..<60 { try store.append(point(Int64(index) * 1000 + 7, index: index), now: now) }
            let importer = try TrackImport(store: store) { _ in 500 }
            try importer.add((0..<400).map { imported(Int64($0) * 150 + 3, index: $0) }, now: now)
            var progress = TrackImport.Progress()
            while !progress.done { progress = try importer.commitStep(budget: budget) }
            #expect(progress.imported == 400)
            results.append(try store.all())
        }
        #expect(results[0].count == 460)
        #expect(results[0] == results[1])
    }

    @Test func aDayTheRecorderWroteToWhileMergingIsMergedAgain() throws {
        let store = try opened()
        let importer = try importer(store)
        try importer.add([imported(2 * 86_400 + 60), imported(2 * 86_400 + 120, index: 1)], now: now)
        var progress = try importer.commitStep(budget: 1)
        var steps = 1
        while !progress.done {
            progress = try importer.commitStep(budget: 1)
            steps += 1
        }
        #expect(steps >= 3, "even a day's records are merged a bounded number at a time")
        let live = point(2 * 86_400 + 3000, index: 9)
        try store.append(live, now: now)
        #expect(try store.all().count == 3)

        let second = try self.importer(store)
        try second.add([imported(86_400 + 60)], now: now)
        try second.add([imported(2 * 86_400 + 200, index: 2)], now: now)
        progress = try second.commitStep(budget: 1)
        #expect(!progress.done)
        // Today's file grows between the steps (as the recorder does).
        let later = point(2 * 86_400 + 3100, index: 10)
        try store.append(later, now: now)
        while !progress.done { progress = try second.commitStep(budget: 1) }
        let keys = try store.all().map(\.key)
        #expect(keys.contains(live.key) && keys.contains(later.key), "no recorded point is lost")
        #expect(keys.count == 6)
    }

    @Test func anAbortedOrRefusedImportLeavesNothing() throws {
        let store = try opened()
        try store.append(point(60), now: now)
        let before = try store.all()

        let aborted = try importer(store)
        try aborted.add([imported(100)], now: now)
        aborted.discard()
        #expect(try stagingDirectories().isEmpty)

        let refusals: [(ImportPoint, String)] = [
            (imported(3 * 86_400 + 400), "\"points[1]\": 2025-12-04T00:06:40.000Z is in the future"),
            (
                imported(-40 * 86_400),
                "\"points[1]\": 2025-10-22T00:00:00.000Z is older than [track] retention-days (30)"
            ),
        ]
        for (point, message) in refusals {
            let refused = try importer(store)
            #expect {
                try refused.add([imported(100), point], now: now)
            } throws: { error in
                let error = error as? TrackError
                return error?.code == .badImport && error?.message.hasPrefix(message) == true
            }
            refused.discard()
        }
        #expect(try store.all() == before)
        #expect(try stagingDirectories().isEmpty)
    }

    @Test func anImportOverMaxSizeIsRefusedWhole() throws {
        let store = try opened(maxSize: 64 << 10)
        let importer = try importer(store)
        try importer.add((0..<1000).map { imported(Int64($0) * 60, index: $0) }, now: now)
        #expect {
            while try !importer.commitStep(budget: 200).done {}
        } throws: { error in
            (error as? TrackError)?.code == .badImport
                && (error as? TrackError)?.message.contains("over [track] max-size (65536)") == true
        }
        importer.discard()
        #expect(try store.all().isEmpty)
        #expect(store.totalBytes == 0)
        #expect(try stagingDirectories().isEmpty)
    }

    @Test func aRestartFinishesACommittedImportAndDiscardsAnyOther() throws {
        let store = try opened()
        try store.append(point(60), now: now)
        store.close()
        // What an import leaves when aklocd dies after its marker: the merged day.
        var merged = [TrackRecord.header(id: 5), TrackRecord.encode(point(30, index: 3))]
        merged.append(TrackRecord.encode(point(60)))
        let committed = scratch.directory + "/" + TrackImport.directoryPrefix + "a1"
        let uncommitted = scratch.directory + "/" + TrackImport.directoryPrefix + "b2"
        for directory in [committed, uncommitted] {
            try FileSystem.createDirectory(directory, mode: 0o700)
            let journal = Journal(path: directory + "/" + TrackStore.fileName(day: dayOne.day))
            _ = try journal.openAppending()
            try journal.append(merged)
            journal.close()
        }
        try AtomicFile.write(Array("1\n".utf8), to: committed + "/" + TrackImport.markerName, mode: 0o600)
        let reopened = scratch.store()
        _ = try reopened.open(now: now)
        #expect(try reopened.all().map(\.key) == [point(30, index: 3).key, point(60).key])
        #expect(try stagingDirectories().isEmpty)
        #expect(scratch.logs.contains { $0.1.contains("finished an import a restart interrupted (1 day file(s))") })
        #expect(scratch.logs.contains { $0.1.contains("discarded an import that was never committed") })
    }
}

@Suite struct TrackImportFeatureTests {
    let scratch = TrackScratch()

    @Test func oneImportAtATimeAndALeavingClientsImportIsDiscarded() throws {
        let host = FakeHost(stateDirectory: scratch.path)
        let feature = try #require(host.sync { TrackFeature.make(TrackSettings(), host: host) })
        try host.sync { try feature.start() }
        try host.sync {
            let first = host.connectClient(uid: 0, status: .notDetermined, isAdmin: true)
            let second = host.connectClient(uid: 0, status: .notDetermined, isAdmin: true)
            let now = host.time.wallNow()
            let point = ImportPoint(
                time: FixTime(secondsSince1970: now.secondsSince1970 - 3600), latitude: 1, longitude: 2)
            let staged = try #require(feature.answer(.importTrack(.add([point])), id: .int(1), from: first)).get()
            #expect(String(decoding: staged, as: UTF8.self) == "{\"id\":1,\"ok\":true,\"result\":{\"staged\":1}}\n")
            let busy = feature.answer(.importTrack(.add([point])), id: .int(2), from: second)
            guard case .failure(let error)? = busy else { throw TrackError(.storageFailed, "no refusal") }
            #expect(error.code == .unavailable)
            let commitFirst = feature.answer(.importTrack(.commit), id: .int(3), from: second)
            guard case .failure(let other)? = commitFirst else { throw TrackError(.storageFailed, "no refusal") }
            #expect(other.code == .unavailable)
            feature.clientGone(first.id)
            let entries = try FileSystem.entries(of: scratch.directory)
            #expect(!entries.contains { $0.hasPrefix(TrackImport.directoryPrefix) })
            // The second client may import now; with nothing staged a commit is refused.
            let nothing = feature.answer(.importTrack(.commit), id: .int(4), from: second)
            guard case .failure(let empty)? = nothing else { throw TrackError(.storageFailed, "no refusal") }
            #expect(empty.code == .badRequest)
            _ = try #require(feature.answer(.importTrack(.add([point])), id: .int(5), from: second)).get()
            let done = try #require(feature.answer(.importTrack(.commit), id: .int(6), from: second)).get()
            let result = try JSONValue.parse(done.dropLast()).get()["result"]
            #expect(result?["done"] == .bool(true) && result?["imported"] == .int(1))
            feature.stop()
        }
    }
}
