import AklocCore
import AklocJSON
import AklocProtocol
import AklocTrack
import Testing

@Suite struct TrackSegmenterTests {
    @Test func gapsPausesAndSourceLossStartNewSegments() {
        var segmenter = TrackSegmenter(after: 6, gap: 60)
        #expect(segmenter.epoch(throttled: false, at: .seconds(0)) == .record(segment: 7))
        #expect(segmenter.epoch(throttled: false, at: .seconds(1)) == .skip)
        #expect(segmenter.epoch(throttled: true, at: .seconds(2)) == .record(segment: 7))
        // Exactly 60 s is not a gap; more is.
        #expect(segmenter.epoch(throttled: true, at: .seconds(62)) == .record(segment: 7))
        #expect(segmenter.epoch(throttled: false, at: .seconds(122.5)) == .record(segment: 8))
        segmenter.interrupt()
        #expect(segmenter.epoch(throttled: false, at: .seconds(123)) == .record(segment: 9))
        segmenter.interrupt()
        segmenter.interrupt()
        #expect(segmenter.epoch(throttled: true, at: .seconds(124)) == .record(segment: 10))
        #expect(TrackSegmenter(after: nil).state == .between(next: 1))
    }
}

@Suite struct DouglasPeuckerTests {
    @Test func aStraightLineKeepsItsEndsAndACornerIsKept() {
        let count = 50
        let straight = DouglasPeucker.keep(
            latitudes: Array(repeating: 52.5, count: count), longitudes: (0..<count).map { 13.4 + Double($0) * 1e-4 },
            tolerance: 1)
        #expect(straight.enumerated().filter(\.element).map(\.offset) == [0, count - 1])
        // An L: 20 points east, then 20 north; the corner is ~140 m off the diagonal.
        let latitudes = (0..<20).map { _ in 52.5 } + (1...20).map { 52.5 + Double($0) * 1e-4 }
        let longitudes = (0..<20).map { 13.4 + Double($0) * 1e-4 } + (1...20).map { _ in 13.4 + 19e-4 }
        let corner = DouglasPeucker.keep(latitudes: latitudes, longitudes: longitudes, tolerance: 5)
        #expect(corner.enumerated().filter(\.element).map(\.offset) == [0, 19, 39])
        #expect(DouglasPeucker.keep(latitudes: latitudes, longitudes: longitudes, tolerance: 0).allSatisfy { $0 })
    }

    @Test func everyDroppedPointIsWithinTheToleranceOfTheKeptLine() {
        var generator = SystemRandomNumberGenerator()
        var latitudes = [52.5]
        var longitudes = [13.4]
        for _ in 1..<400 {
            latitudes.append(latitudes.last! + Double.random(in: -1e-4...1e-4, using: &generator))
            longitudes.append(longitudes.last! + Double.random(in: -1e-4...2e-4, using: &generator))
        }
        let tolerance = 8.0
        let kept = DouglasPeucker.keep(latitudes: latitudes, longitudes: longitudes, tolerance: tolerance)
        let indices = kept.enumerated().filter(\.element).map(\.offset)
        #expect(indices.count < 400 && indices.first == 0 && indices.last == 399)
        // Brute force: each dropped point against the kept segment around it, in metres.
        for (a, b) in zip(indices, indices.dropFirst()) where b > a + 1 {
            for index in (a + 1)..<b {
                let distance = crossTrack(
                    (latitudes[index], longitudes[index]), (latitudes[a], longitudes[a]), (latitudes[b], longitudes[b]))
                #expect(distance <= tolerance * 1.01, "point \(index) is \(distance) m off")
            }
        }
    }

    /// Distance from p to the segment ab on a sphere, by sampling the segment finely.
    private func crossTrack(_ p: (Double, Double), _ a: (Double, Double), _ b: (Double, Double)) -> Double {
        var best = Double.infinity
        for step in 0...2000 {
            let t = Double(step) / 2000
            let lat = a.0 + (b.0 - a.0) * t
            let lon = a.1 + (b.1 - a.1) * t
            best = min(best, Location.distance(latitude: p.0, longitude: p.1, toLatitude: lat, longitude: lon))
        }
        return best
    }
}

@Suite struct TrackRecorderTests {
    private func recorder(_ scratch: TrackScratch, wall: @escaping () -> FixTime) -> TrackRecorder {
        TrackRecorder(
            settings: TrackSettings(), directory: scratch.directory,
            log: { [weak scratch] level, message in scratch?.logs.append((level, message)) }, wallClock: wall)
    }

    /// gpsd's first fixes come without a time (no date yet): none is
    /// recorded, none starts a segment, and the receiver's first timed fix
    /// starts it, so no segment mixes the receipt clock with the receiver's.
    @Test func fixesWithoutTheReceiversTimeAreNotRecorded() throws {
        let scratch = TrackScratch()
        var wall = dayOne
        let recorder = recorder(scratch) { wall }
        try recorder.open()
        // Received today; the receiver's clock says a year earlier.
        func fix(_ seconds: Double, timed: Bool, throttled: Bool) {
            wall = at(Int64(seconds))
            var location = point(Int64(seconds), index: Int(seconds)).location
            location.receivedAt = wall
            location.timestamp = timed ? at(Int64(seconds) - 365 * 86_400) : nil
            recorder.handle(.didUpdateLocation(location, afterTimeInterval: throttled ? 1 : nil), at: .seconds(seconds))
        }
        fix(0, timed: false, throttled: false)
        fix(1, timed: false, throttled: true)
        #expect(recorder.recorded == 0)
        fix(2, timed: true, throttled: false)  // not a throttled delivery, but the segment's first
        fix(3, timed: true, throttled: true)
        fix(4, timed: false, throttled: true)  // mid-segment: skipped, the segment goes on
        fix(5, timed: true, throttled: true)
        // More than a minute of time-less fixes is a gap: the next timed fix starts a segment.
        fix(40, timed: false, throttled: true)
        fix(100, timed: false, throttled: true)
        fix(101, timed: true, throttled: false)
        let points = try recorder.store.all()
        #expect(points.map(\.segment) == [1, 1, 1, 2])
        #expect(points.allSatisfy { $0.location.timestamp != nil })
        #expect(
            points.map { $0.location.timestamp!.secondsSince1970 - dayOne.secondsSince1970 + 365 * 86_400 } == [
                2, 3, 5, 101,
            ])
        #expect(scratch.logs.filter { $0.1.contains("without the receiver's time") }.count == 1, "logged once a run")
        recorder.close()
    }

    @Test func recordsThrottledEpochsInSegmentsAndSyncsOnSchedule() throws {
        let scratch = TrackScratch()
        var wall = dayOne
        let recorder = recorder(scratch) { wall }
        try recorder.open()
        var expected: [TrackPoint] = []
        func epoch(_ seconds: Double, throttled: Bool, index: Int) {
            wall = at(Int64(seconds))
            var location = point(Int64(seconds), index: index).location
            location.receivedAt = wall
            recorder.handle(.didUpdateLocation(location, afterTimeInterval: throttled ? 1 : nil), at: .seconds(seconds))
        }
        epoch(0, throttled: false, index: 0)  // a segment's first epoch is always recorded
        expected.append(point(0, segment: 1, index: 0))
        #expect(recorder.syncDue == .seconds(5))
        epoch(1, throttled: false, index: 1)
        epoch(2, throttled: true, index: 2)
        expected.append(point(2, segment: 1, index: 2))
        recorder.handle(.didGetNotification(.paused), at: .seconds(3))
        epoch(10, throttled: true, index: 3)
        expected.append(point(10, segment: 2, index: 3))
        recorder.syncIfDue(at: .seconds(4.9))
        #expect(recorder.store.unsynced)
        recorder.syncIfDue(at: .seconds(5))
        #expect(!recorder.store.unsynced && recorder.syncDue == nil)
        epoch(200, throttled: false, index: 4)
        expected.append(point(200, segment: 3, index: 4))
        #expect(recorder.recorded == 4)
        #expect(try recorder.store.all() == expected)
        recorder.close()
        // Restarted, it goes on with the next segment.
        let again = self.recorder(scratch) { wall }
        try again.open()
        epoch(201, throttled: false, index: 5)
        again.handle(
            .didUpdateLocation(point(202, index: 6).location, afterTimeInterval: nil), at: .seconds(202))
        #expect(try again.store.all().last?.segment == 4)
        again.close()
    }

    @Test func repliesStayUnderTheByteBudgetAndPageOnToTheEnd() throws {
        let scratch = TrackScratch()
        let wall = at(86_400)
        let recorder = recorder(scratch) { wall }
        try recorder.open()
        for index in 0..<3_000 {
            recorder.handle(
                .didUpdateLocation(point(Int64(index), index: index).location, afterTimeInterval: 1),
                at: .seconds(Double(index)))
        }
        var seen: [TrackPoint] = []
        var after: String?
        var pages = 0
        repeat {
            let line = try recorder.reply(
                to: TrackQuery(limit: 100_000, after: after), id: .int(1), byteBudget: 64 << 10
            ).get()
            #expect(line.count <= 64 << 10)
            let json = try JSONValue.parse(line.dropLast()).get()
            let result = try #require(json["result"])
            let page = try #require(TrackPage(json: result))
            seen += page.points
            after = page.next
            pages += 1
        } while after != nil && pages < 1000
        #expect(seen.count == 3_000 && pages > 5)
        #expect(seen.map(\.location.longitude) == (0..<3_000).map { point(0, index: $0).location.longitude })
        // Simplified, a straight line at constant speed is its two ends.
        let line = try recorder.reply(to: TrackQuery(simplify: 1), id: nil, byteBudget: 1 << 20).get()
        let json = try JSONValue.parse(line.dropLast()).get()
        let result = try #require(json["result"])
        #expect(TrackPage(json: result)?.points.count == 2)
        // Defaults resolved against now: since after until is refused naming since.
        let error = try #require(
            recorder.reply(to: TrackQuery(since: at(2 * 86_400)), id: nil, byteBudget: 1 << 20).failure)
        #expect(error.code == .badRequest && error.message.contains("\"since\""))
        let cursor = try #require(
            recorder.reply(to: TrackQuery(after: "d1.i2.o3.c4"), id: nil, byteBudget: 1 << 20).failure)
        #expect(cursor.code == .badRequest && cursor.message.contains("\"after\""))
        recorder.close()
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
