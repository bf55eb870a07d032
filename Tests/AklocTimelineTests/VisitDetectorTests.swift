import AklocCore
import AklocTimeline
import Testing

@Suite struct VisitDetectorTests {
    @Test func aStayLongEnoughIsAVisitAndAShortStopIsNot() {
        var track = TrackMaker()
        let start = track.time
        track.stay(600)
        track.move(3000, speed: 14)
        track.stay(120)  // a red light: too short
        track.move(2000, speed: 14)
        let arrival = track.time
        track.stay(900)
        let result = timeline(track.fixes)
        #expect(result.visits.count == 2)
        #expect(result.visits[0].arrival == start)
        // The last fix inside the radius, about 100 m into the drive. The
        // next visit arrives at the first fix of the window the car stopped
        // in: the window jumps to the first fix 100 m from its first, so
        // that is at most 8 fixes (112 m at 14 m/s) before the stop.
        #expect(abs(result.visits[0].departure! - (start + 600 + 100 / 14)) <= 1.5)
        #expect((arrival - 9)...arrival ~= result.visits[1].arrival)
        #expect(result.visits[1].departure == nil)
        #expect(result.visits[0].radius < 10)
        #expect(result.trips.count == 1)
        let trip = result.trips[0]
        #expect(trip.from == start && trip.to == result.visits[1].arrival)
        #expect(trip.start == result.visits[0].departure && trip.end == result.visits[1].arrival)
        // 5 km less the 100 m inside the first visit and up to 112 m inside
        // the second; the stop's jitter adds nothing.
        #expect((4790...4920).contains(trip.distance))
        #expect(!trip.unknownPath)
        // Moving time leaves out the stop at the light.
        #expect(trip.movingTime < trip.end - trip.start - 100)
        #expect(abs(trip.maxSpeed - 14) < 0.5)
    }

    @Test func oneWildFixOrALittleJitterOutsideNeitherEndsAVisitNorMakesATrip() {
        var track = TrackMaker(seed: 7)
        track.stay(600)
        // A multipath spike 400 m away, then back.
        track.fix(east: 400)
        track.time += 1
        track.stay(300)
        // Two fixes 150 m out, then back: not three.
        track.fix(east: 150)
        track.time += 1
        track.fix(east: 160)
        track.time += 1
        track.stay(300)
        // Ten seconds wandering 130 m out (not beyond twice the radius), then back.
        for _ in 0..<10 {
            track.fix(east: 130)
            track.time += 1
        }
        track.stay(300)
        let result = timeline(track.fixes)
        #expect(result.visits.count == 1)
        #expect(result.visits[0].departure == nil)
        #expect(result.trips.isEmpty)
    }

    @Test func aStopIsTimedToTheFixThatLeavesItUnlessAGapComesFirst() {
        // Fixes inside for 4 min 50 s, then the first one out 5 min after the
        // first: a stop of 5 min, as Li et al. and trackintel time it.
        var track = TrackMaker(seed: 5)
        let start = track.time
        track.stay(290, every: 10)
        let lastInside = track.time - 10
        track.move(3000, speed: 15, every: 10)
        var result = timeline(track.fixes)
        #expect(result.visits.count == 1)
        #expect(result.visits.first?.arrival == start)
        #expect(result.visits.first?.departure == lastInside)
        // The same, but the way out comes after 3 min without a fix: a gap
        // proves no stay, so that is a trip.
        track = TrackMaker(seed: 5)
        track.stay(110, every: 10)
        track.gap(180)
        track.move(3000, speed: 15, every: 10)
        result = timeline(track.fixes)
        #expect(result.visits.isEmpty)
    }

    @Test func aWalkerLeavesTheRadiusOfTheArrivalOrOfTheCentre() {
        // Arriving from the west, the first fix of the stop is 60 m west of
        // where the walker then stands; leaving east, they are 100 m from
        // that first fix 40 m from the centre, and the visit ends there.
        var track = TrackMaker(seed: 9)
        let start = track.time
        track.fix(east: -60, speed: 1)
        track.time += 10
        track.stay(600, every: 10, jitter: 3)
        let leaving = track.time
        track.move(400, speed: 1, every: 10)
        let result = timeline(track.fixes)
        #expect(result.visits.count == 1)
        #expect(result.visits.first?.arrival == start)
        // The last fix within 100 m of the first is about 40 m east (40 s).
        let departure = try? #require(result.visits.first?.departure)
        #expect(departure.map { (leaving + 20)...(leaving + 50) ~= $0 } == true)
    }

    @Test func aGapInsideTheRadiusKeepsTheVisitAndAGapWithAJumpIsATripOfUnknownPath() {
        var track = TrackMaker(seed: 3)
        let start = track.time
        track.stay(400)
        track.gap(3 * 3600)  // indoors, no fix
        track.stay(400)
        let lastInside = track.time - 1
        track.gap(1800)  // the receiver off while driving
        track.jump(20_000)
        let arrival = track.time
        track.stay(600)
        let result = timeline(track.fixes)
        #expect(result.visits.count == 2)
        #expect(result.visits[0].arrival == start)
        #expect(result.visits[0].departure == lastInside)
        #expect(result.visits[1].arrival == arrival)
        #expect(result.trips.count == 1)
        #expect(result.trips[0].unknownPath)
        #expect(abs(result.trips[0].distance - 20_000) < 50)
        #expect(result.trips[0].movingTime == 0)
    }

    @Test func aStillReceiversHoursOfJitterAreOneVisit() {
        var track = TrackMaker(seed: 11)
        track.stay(6 * 3600, jitter: 25)
        let result = timeline(track.fixes)
        #expect(result.visits.count == 1)
        #expect(result.trips.isEmpty)
        #expect(result.visits[0].radius < 25)
    }

    @Test func poorFixesWeighLessAndNeverDecide() {
        var track = TrackMaker(seed: 5)
        track.stay(600)
        // Fixes far off but with an accuracy worse than the radius: ignored.
        for _ in 0..<30 {
            track.fix(east: 500, accuracy: 800)
            track.time += 1
        }
        track.stay(60)
        var detector = VisitDetector()
        var events: [VisitDetector.Event] = []
        for fix in track.fixes { events += detector.add(fix) }
        #expect(detector.ignoredFixes == 30)
        #expect(events.count == 1)
        // A fix 40 m off with a 60 m accuracy barely moves the centre of good ones.
        var still = TrackMaker(seed: 9)
        still.stay(400, jitter: 0)
        for _ in 0..<100 {
            still.fix(east: 40, accuracy: 60)
            still.time += 1
        }
        let visit = timeline(still.fixes).visits[0]
        let (latitude, longitude) = still.offset(east: 0, north: 0)
        let shift = Location.distance(
            latitude: latitude, longitude: longitude, toLatitude: visit.latitude, longitude: visit.longitude)
        #expect(shift < 1.5)
    }

    @Test func arrivalThenTheSameVisitWithItsDeparture() {
        var track = TrackMaker(seed: 2)
        track.stay(400)
        track.move(1000, speed: 1.4)
        var detector = VisitDetector()
        var events: [VisitDetector.Event] = []
        for fix in track.fixes { events += detector.add(fix) }
        guard events.count == 2, case .arrived(let arrived) = events[0], case .departed(let departed) = events[1]
        else {
            Issue.record("expected an arrival and a departure, got \(events)")
            return
        }
        #expect(arrived.departure == nil)
        #expect(departed.arrival == arrived.arrival)
        #expect(departed.departure != nil)
        // A walk leaves the radius after about 70 s; the departure is the last fix inside.
        #expect(abs(departed.departure! - (arrived.arrival + 400 + 100 / 1.4)) < 8)
        #expect(detector.currentTrip != nil)
    }

    @Test func outOfOrderAndImpossibleFixesAreIgnored() {
        var detector = VisitDetector()
        _ = detector.add(TimelineFix(time: 100, latitude: 1, longitude: 1))
        _ = detector.add(TimelineFix(time: 50, latitude: 1, longitude: 1))
        _ = detector.add(TimelineFix(time: .nan, latitude: 1, longitude: 1))
        _ = detector.add(TimelineFix(time: 200, latitude: 91, longitude: 1))
        #expect(detector.ignoredFixes == 3)
    }
}
