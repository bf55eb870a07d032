import AklocCore
import AklocFeature
import AklocGeo
import AklocJSON
import AklocProtocol
import AklocTestSupport
import AklocTimeline
import AklocTrack
import Glibc
import Testing

/// `TimelineFeature` with the real `TrackFeature` on a fake host, on
/// virtual time: the fixes go through the recorder into the journal, and
/// the `visits` and `trips` ops compute from it what the detector finds
/// over the same fixes.
@Suite struct TimelineFeatureTests {
    let directory = TestSockets.temporaryDirectory()

    final class Running {
        let host: FakeHost
        let track: TrackFeature
        let timeline: TimelineFeature
        let recorder: SubscriberID

        /// `wallClock`: seconds since 1970 the host's clock starts at (a restart later in the day).
        init(directory: String, settings: TimelineSettings = TimelineSettings(), wallClock: Double? = nil) throws {
            host = FakeHost(stateDirectory: directory)
            let host = host
            if let wallClock {
                let origin = Double(host.time.wallOrigin.secondsSince1970)
                if wallClock > origin { host.sync { host.time.advance(by: wallClock - origin) } }
            }
            (track, timeline) = try host.sync {
                let track = try #require(TrackFeature.make(TrackSettings(), host: host))
                try track.start()
                let timeline = try #require(TimelineFeature.make(settings, host: host))
                try timeline.start()
                return (track, timeline)
            }
            recorder = try #require(host.sync { host.added.first })
        }

        /// Each fix recorded as the recorder's throttled delivery, received at its own time.
        func record(_ fixes: [TimelineFix]) {
            host.sync {
                for fix in fixes {
                    let time = TimelineFix.fixTime(fix.time)
                    let location = Location(
                        latitude: fix.latitude, longitude: fix.longitude, horizontalAccuracy: fix.accuracy,
                        speed: fix.speed, timestamp: time, receivedAt: time)
                    host.deliver(.didUpdateLocation(location, afterTimeInterval: 1), to: [recorder])
                }
            }
        }

        func ask(
            _ operation: ClientRequest.Operation, status: AuthorizationStatus = .authorizedAlways, admin: Bool = false
        )
            throws -> Result<JSONValue, ProtocolError>
        {
            try host.sync {
                let client = host.connectClient(status: status, isAdmin: admin)
                switch try #require(timeline.answer(operation, id: .int(1), from: client)) {
                case .success(let line):
                    return .success(try #require(JSONValue.parse(line.dropLast()).get()["result"]))
                case .failure(let error):
                    return .failure(error)
                }
            }
        }

        deinit { host.sync { track.stop() } }
    }

    func removeScratch() { _ = system("rm -rf '\(directory)'") }

    static func day() -> [TimelineFix] {
        var track = TrackMaker(start: 1_780_000_000, seed: 21)
        track.stay(1200)
        track.move(4000, speed: 12)
        track.stay(900, every: 5)
        track.move(1500, speed: 1.4, every: 2)
        track.stay(600)
        return track.fixes
    }

    @Test func visitsAndTripsFromTheJournalAreWhatTheDetectorFinds() throws {
        defer { removeScratch() }
        let running = try Running(directory: directory)
        let fixes = Self.day()
        running.record(fixes)
        let expected = timeline(fixes)
        let range = TimelineQuery(
            since: TimelineFix.fixTime(fixes[0].time), until: TimelineFix.fixTime(fixes.last!.time))
        let visits = try #require(try running.ask(.visits(range)).get()["visits"]?.arrayValue)
        #expect(visits.count == 3)
        #expect(visits.count == expected.visits.count)
        for (wire, found) in zip(visits, expected.visits) {
            #expect(wire["arrival"] == .string(TimelineFix.fixTime(found.arrival).iso8601))
            #expect(wire["departure"] == found.departure.map { .string(TimelineFix.fixTime($0).iso8601) })
            #expect(wire["coordinate"]?["latitude"]?.doubleValue == found.latitude)
            #expect(wire["placemark"] == nil, "no geo data on this host")
        }
        let trips = try #require(try running.ask(.trips(range), admin: true).get()["trips"]?.arrayValue)
        #expect(trips.count == 2)
        #expect(trips[0]["from"]?["arrival"] == visits[0]["arrival"])
        #expect(trips[0]["to"]?["arrival"] == visits[1]["arrival"])
        #expect(trips[0]["distance"]?.doubleValue == expected.trips[0].distance.rounded())
        // The drive is 4000 m; the first visit keeps its first 100 m and the
        // second begins up to 108 m (one window of 1 s fixes at 12 m/s) before it.
        #expect((3790...3910).contains(expected.trips[0].distance))
        // A range in the middle of the second visit still finds it whole.
        let middle = TimelineFix.fixTime(expected.visits[1].arrival + 300)
        let inside = try #require(
            try running.ask(.visits(TimelineQuery(since: middle, until: middle))).get()["visits"]?.arrayValue)
        #expect(inside == [visits[1]])
    }

    @Test func savedPlacesAndTheGeoLookupsNameTheVisits() throws {
        defer { removeScratch() }
        let running = try Running(directory: directory)
        let fixes = Self.day()
        running.record(fixes)
        let home = try SavedPlace(
            name: "Home", coordinate: Coordinate(latitude: fixes[0].latitude, longitude: fixes[0].longitude),
            radius: 50, owner: 1000, createdAt: FixTime(secondsSince1970: 0))
        let other = try SavedPlace(
            name: "Theirs", coordinate: home.coordinate, owner: 1001, createdAt: FixTime(secondsSince1970: 0))
        running.host.sync {
            running.host.post(SavedPlaces(byOwner: [1000: [home], 1001: [other]]))
            running.host.post(
                PlaceDescriber(
                    describe: { point, _ in
                        GeoLookups.Description(
                            placemark: Placemark(name: "Testville", coordinate: point), country: nil, timeZone: nil)
                    },
                    countryCode: { $0.longitude < 4.93 ? "NL" : "DE" }))
        }
        let range = TimelineQuery(
            since: TimelineFix.fixTime(fixes[0].time), until: TimelineFix.fixTime(fixes.last!.time))
        let visits = try #require(try running.ask(.visits(range)).get()["visits"]?.arrayValue)
        #expect(visits.map { $0["place"] } == [.string("Home"), nil, nil])
        #expect(visits[1]["placemark"]?["name"] == .string("Testville"))
        let trips = try #require(try running.ask(.trips(range)).get()["trips"]?.arrayValue)
        #expect(trips[0]["countries"] == ["NL", "DE"])
    }

    @Test func onlyAlwaysClientsAndAdminsMayAskAndBadRangesAreRefused() throws {
        defer { removeScratch() }
        let running = try Running(directory: directory)
        let query = TimelineQuery(since: FixTime(secondsSince1970: 1_780_000_000))
        for status in [AuthorizationStatus.authorizedWhenInUse, .denied, .notDetermined] {
            guard case .failure(let error) = try running.ask(.visits(query), status: status) else {
                Issue.record("\(status) read visits")
                continue
            }
            #expect(error.code == .notAuthorized)
        }
        guard case .success = try running.ask(.trips(query), status: .denied, admin: true) else {
            Issue.record("an admin could not read trips")
            return
        }
        let reversed = TimelineQuery(
            since: FixTime(secondsSince1970: 1_780_000_000), until: FixTime(secondsSince1970: 1_779_000_000))
        let tooLong = TimelineQuery(
            since: FixTime(secondsSince1970: 1_700_000_000), until: FixTime(secondsSince1970: 1_780_000_000))
        for bad in [reversed, tooLong] {
            guard case .failure(let error) = try running.ask(.visits(bad)) else {
                Issue.record("\(bad) was accepted")
                continue
            }
            #expect(error.code == .badRequest)
        }
    }
}
