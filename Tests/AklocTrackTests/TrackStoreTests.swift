import AklocCore
import AklocPosix
import AklocProtocol
import AklocTrack
import Glibc
import Testing

@Suite struct TrackRecordTests {
    @Test func aPointRoundTripsWithEveryFieldOrNone() throws {
        var full = Location(
            latitude: -33.8688, longitude: 151.2093, mode: .threeD, altitude: 58.25, ellipsoidalAltitude: 80.5,
            horizontalAccuracy: 2.5, verticalAccuracy: 4, speed: 12.75, speedAccuracy: 0.5, course: 359.5,
            courseAccuracy: 3, climb: -0.25, timestamp: FixTime(secondsSince1970: 1_764_547_200, nanoseconds: 1),
            receivedAt: FixTime(secondsSince1970: 1_764_547_201, nanoseconds: 999_999_999), device: "/dev/tty,ACM0")
        let bare = Location(latitude: 0, longitude: -180, mode: .twoD)
        for location in [full, bare] {
            let point = TrackPoint(location: location, segment: 42)
            #expect(TrackRecord.decode(TrackRecord.encode(point)) == point)
        }
        full.device = "bad\ndevice"
        #expect(TrackRecord.decode(TrackRecord.encode(TrackPoint(location: full, segment: 1)))?.location.device == nil)
    }

    @Test(arguments: [
        "", "1", "2,1,1.000000000,,1,1,,,,,,,,,,3,", "1,x,1.000000000,,1,1,,,,,,,,,,3,",
        "1,1,1.0,,1,1,,,,,,,,,,3,", "1,1,1.000000000,,91,1,,,,,,,,,,3,", "1,1,1.000000000,,1,1,,,,,,,,,,4,",
        "1,1,1.000000000,,1,1,nan,,,,,,,,,3,", "1,1,1.000000000,,1,1,,,,,,,,,3,", "1,-1,1.000000000,,1,1,,,,,,,,,,3,",
    ])
    func malformedRecordsAreRefused(text: String) {
        #expect(TrackRecord.decode(Array(text.utf8)) == nil, "\(text)")
    }
}

@Suite struct TrackStoreTests {
    @Test func pagesFollowTheCursorAcrossDaysAndKeepOrder() throws {
        let scratch = TrackScratch()
        let store = scratch.store()
        #expect(try store.open(now: dayOne) == nil)
        var written: [TrackPoint] = []
        for index in 0..<40 {
            let point = point(Int64(index) * 7_200, segment: UInt64(index / 10 + 1), index: index)
            #expect(try store.append(point, now: point.location.receivedAt!))
            written.append(point)
        }
        try store.sync()
        #expect(store.days.count == 4)
        #expect(try store.all() == written)
        #expect(try store.all(limit: 100_000) == written)
        // The window is on receipt time, inclusive.
        let window = try store.all(since: at(7_200 * 5), until: at(7_200 * 12))
        #expect(window == Array(written[5...12]))
        // A reopened store finds the last point (segments go on from it).
        store.close()
        #expect(try scratch.store().open(now: at(4 * 86_400)) == written.last)
    }

    @Test func aCursorFromAnotherFileIsRefused() throws {
        let scratch = TrackScratch()
        let store = scratch.store()
        _ = try store.open(now: dayOne)
        for index in 0..<5 { try store.append(point(Int64(index), index: index), now: dayOne) }
        let page = try store.page(since: dayOne, until: at(60), after: nil, limit: 2)
        let cursor = try #require(page.points.last?.next)
        #expect(TrackCursor(text: cursor.text) == cursor)
        #expect(TrackCursor(text: cursor.text.replacingLastDigit()) == nil)
        try store.clear(before: nil)
        for index in 0..<5 { try store.append(point(Int64(index), index: index), now: dayOne) }
        #expect(throws: TrackError.self) { try store.page(since: dayOne, until: at(60), after: cursor, limit: 2) }
        do {
            _ = try store.page(since: dayOne, until: at(60), after: cursor, limit: 2)
        } catch {
            #expect(error.code == .badCursor)
        }
        var missing = cursor
        missing.day += 3
        #expect(throws: TrackError.self) { try store.page(since: dayOne, until: at(60), after: missing, limit: 2) }
    }

    @Test func aTruncatedFileYieldsEveryCompleteRecord() throws {
        let scratch = TrackScratch()
        let points = (0..<30).map { point(Int64($0), index: $0) }
        let bytes = points.flatMap { Journal.encode(TrackRecord.encode($0)) }
        let ends = points.map { Journal.encode(TrackRecord.encode($0)).count }.reduce(into: [0]) {
            $0.append($0.last! + $1)
        }
        try FileSystem.createDirectory(scratch.directory, mode: 0o700)
        for length in stride(from: 0, through: bytes.count, by: 37) {
            scratch.write(TrackStore.fileName(day: dayOne.day), Array(bytes[0..<length]))
            let store = scratch.store()
            _ = try store.open(now: dayOne)
            let complete = ends.lastIndex { $0 <= length }!
            #expect(try store.all() == Array(points[0..<complete]), "cut at \(length)")
            // The torn tail is cut off, so the next point starts a line of its own.
            try store.append(point(100, index: 99), now: dayOne)
            #expect(try store.all() == Array(points[0..<complete]) + [point(100, index: 99)], "cut at \(length)")
            store.close()
        }
    }

    @Test func flippedBytesMidFileCostOnlyTheRecordsTheyHit() throws {
        let scratch = TrackScratch()
        let points = (0..<50).map { point(Int64($0), index: $0) }
        let lines = points.map { Journal.encode(TrackRecord.encode($0)) }
        try FileSystem.createDirectory(scratch.directory, mode: 0o700)
        var random = SystemRandomNumberGenerator()
        for _ in 0..<40 {
            var damaged = Set<Int>()
            var file: [UInt8] = []
            for (index, line) in lines.enumerated() {
                var line = line
                if Int.random(in: 0..<5, using: &random) == 0 {
                    // Any byte of the record but its newline, any bit but one making a newline.
                    let at = Int.random(in: 0..<(line.count - 1), using: &random)
                    var bit = UInt8(1) << UInt8.random(in: 0..<8, using: &random)
                    if line[at] ^ bit == 0x0A { bit = 0x80 }
                    line[at] ^= bit
                    damaged.insert(index)
                }
                file += line
            }
            scratch.write(TrackStore.fileName(day: dayOne.day), file)
            let store = scratch.store()
            _ = try store.open(now: dayOne)
            let expected = points.enumerated().filter { !damaged.contains($0.offset) }.map(\.element)
            #expect(try store.all() == expected)
            if !damaged.isEmpty {
                #expect(scratch.logs.contains { $0.0 == .warning && $0.1.contains("corrupt record") })
            }
            store.close()
            scratch.logs.removeAll()
        }
    }

    @Test func retentionDropsWholeDaysOnceAllTheirPointsAreOld() throws {
        let scratch = TrackScratch()
        var now = dayOne
        let store = scratch.store(retentionDays: 3)
        _ = try store.open(now: now)
        for day in 0..<6 {
            now = at(Int64(day) * 86_400 + 3_600)
            try store.append(point(Int64(day) * 86_400 + 3_600, index: day), now: now)
        }
        // Day 5 is today: days 2, 3, 4 and 5 may still hold points younger than 3 days.
        #expect(store.days.keys.sorted() == (2...5).map { dayOne.day + Int64($0) })
        #expect(scratch.logs.filter { $0.1.contains("older than retention-days 3") }.count == 2)
        store.close()
        // A restart a week later applies the limit before anything is recorded.
        let later = scratch.store(retentionDays: 3)
        _ = try later.open(now: at(12 * 86_400))
        #expect(later.days.isEmpty)
    }

    @Test func maxSizeDropsTheOldestWholeDaysButNeverToday() throws {
        let scratch = TrackScratch()
        let oneLine = Journal.encode(TrackRecord.encode(point(0))).count
        // Room for 25 points in all.
        let store = scratch.store(maxSize: 25 * oneLine + oneLine / 2)
        _ = try store.open(now: dayOne)
        for day in 0..<4 {
            for index in 0..<10 {
                let seconds = Int64(day) * 86_400 + Int64(index)
                try store.append(point(seconds, index: 0), now: at(seconds))
            }
        }
        #expect(store.totalBytes <= store.limits.maxSize)
        #expect(store.days.count == 2)
        #expect(try store.all().count == 20)
        #expect(scratch.logs.contains { $0.0 == .notice && $0.1.contains("over max-size") })
        // Today's file alone full: points are refused, logged once, nothing else is lost.
        for index in 10..<40 { try store.append(point(3 * 86_400 + Int64(index)), now: at(3 * 86_400 + 40)) }
        #expect(store.days.count == 1)
        #expect(scratch.logs.filter { $0.1.contains("alone reached max-size") }.count == 1)
        #expect(store.totalBytes <= store.limits.maxSize + oneLine)
    }

    @Test func clearBeforeKeepsLaterPointsAndRewritesTheDayItFallsIn() throws {
        let scratch = TrackScratch()
        let store = scratch.store()
        _ = try store.open(now: dayOne)
        let points = (0..<9).map { point(Int64($0) * 28_800, index: $0) }
        for point in points { try store.append(point, now: point.location.receivedAt!) }
        try store.clear(before: at(28_800 * 4))
        #expect(try store.all() == Array(points[4...]))
        try store.append(point(28_800 * 9, index: 9), now: at(28_800 * 9))
        #expect(try store.all().count == 6)
        try store.clear(before: nil)
        #expect(try store.all().isEmpty && store.days.isEmpty)
    }
}

extension String {
    fileprivate func replacingLastDigit() -> String {
        var text = self
        let last = text.removeLast()
        return text + (last == "0" ? "1" : "0")
    }
}

/// Version 2 records: the fix quality, and version 1 records still read.
@Suite struct TrackRecordFixQualityTests {
    static let quality = Location(
        latitude: 44.0688, longitude: -121.3142, mode: .threeD, altitude: 1127.7,
        timestamp: FixTime(secondsSince1970: 1_594_507_065), receivedAt: FixTime(secondsSince1970: 1_764_547_201),
        device: "/dev/pts/1", fixStatus: .dgps, satellitesUsed: 11, hdop: 0.84)

    @Test func aPointWithFixQualityRoundTripsAsVersion2() {
        for status in FixStatus.allCases + [nil] {
            for used in [11, nil] as [Int?] {
                var location = Self.quality
                location.fixStatus = status
                location.satellitesUsed = used
                let point = TrackPoint(location: location, segment: 7)
                let record = TrackRecord.encode(point)
                #expect(record.first == UInt8(ascii: "2"))
                #expect(TrackRecord.decode(record) == point, "\(String(decoding: record, as: UTF8.self))")
            }
        }
        let text = String(decoding: TrackRecord.encode(TrackPoint(location: Self.quality, segment: 7)), as: UTF8.self)
        #expect(text.hasSuffix(",3,2,11,0.84,/dev/pts/1"), "\(text)")
    }

    @Test func aPointWithoutFixQualityIsStillWrittenAsVersion1() {
        var location = Self.quality
        location.fixStatus = nil
        location.satellitesUsed = nil
        location.hdop = nil
        let record = TrackRecord.encode(TrackPoint(location: location, segment: 7))
        #expect(String(decoding: record, as: UTF8.self).hasPrefix("1,7,"))
    }

    @Test func aVersion1RecordWrittenBeforeStillReads() {
        let old = "1,3,1764517000.250000000,1764517000.000000000,52.5163,13.3777,34.5,,4.2,,1.25,,87.5,,,3,/dev/ttyACM0"
        let point = TrackRecord.decode(Array(old.utf8))
        #expect(point?.location.device == "/dev/ttyACM0")
        #expect(
            point?.location.fixStatus == nil && point?.location.satellitesUsed == nil && point?.location.hdop == nil)
        #expect(point?.location.course == 87.5)
    }

    @Test(arguments: [
        "2,1,1.000000000,,1,1,,,,,,,,,,3,", "2,1,1.000000000,,1,1,,,,,,,,,,3,0,,,",
        "2,1,1.000000000,,1,1,,,,,,,,,,3,10,,,", "2,1,1.000000000,,1,1,,,,,,,,,,3,x,,,",
        "2,1,1.000000000,,1,1,,,,,,,,,,3,,-1,,", "2,1,1.000000000,,1,1,,,,,,,,,,3,,1.5,,",
        "2,1,1.000000000,,1,1,,,,,,,,,,3,,,nan,", "2,1,1.000000000,,1,1,,,,,,,,,,3,,,-0.5,",
        "2,1,1.000000000,,1,1,,,,,,,,,,3,,1001,,",
    ])
    func malformedVersion2RecordsAreRefused(text: String) {
        #expect(TrackRecord.decode(Array(text.utf8)) == nil, "\(text)")
    }
}
