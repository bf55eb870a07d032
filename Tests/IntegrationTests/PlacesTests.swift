import AklocTestSupport
import Foundation
import Testing

/// Saved places and regions end to end (issue 11, DESIGN §9): the ops on a
/// real aklocd, a region crossing on a real gpsd replay, and the same place
/// and crossing at a real mosquitto in OwnTracks JSON.
@Suite(.serialized)
struct PlacesTests {
    // MARK: - The track, from the capture itself

    /// Every position the capture's RMC and GGA sentences give, in order.
    static func track(_ log: String) throws -> [(latitude: Double, longitude: Double)] {
        let text = try String(contentsOfFile: log, encoding: .isoLatin1)
        func degrees(_ value: Substring, _ hemisphere: Substring, width: Int) -> Double? {
            guard value.count > width, let whole = Double(value.prefix(width)),
                let minutes = Double(value.dropFirst(width))
            else { return nil }
            let result = whole + minutes / 60
            return hemisphere == "S" || hemisphere == "W" ? -result : result
        }
        var points: [(Double, Double)] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            let at: Int
            if line.hasPrefix("$GPRMC"), fields.count > 6, fields[2] == "A" {
                at = 3
            } else if line.hasPrefix("$GPGGA"), fields.count > 6, fields[6] != "0" {
                at = 2
            } else {
                continue
            }
            guard let latitude = degrees(fields[at], fields[at + 1], width: 2),
                let longitude = degrees(fields[at + 2], fields[at + 3], width: 3)
            else { continue }
            points.append((latitude, longitude))
        }
        return points
    }

    static func metres(_ a: (latitude: Double, longitude: Double), _ b: (latitude: Double, longitude: Double)) -> Double
    {
        let radians = Double.pi / 180
        let dLat = (b.latitude - a.latitude) * radians
        let dLon = (b.longitude - a.longitude) * radians
        let h =
            sin(dLat / 2) * sin(dLat / 2) + cos(a.latitude * radians) * cos(b.latitude * radians) * sin(dLon / 2)
            * sin(dLon / 2)
        return 2 * 6_371_008.8 * asin(min(1, sqrt(h)))
    }

    /// A circle the track crosses exactly once in and once out, whatever the
    /// fixes' accuracy up to `margin`: the points inside form one unbroken
    /// run, some lie deeper than `margin` inside, and the first and last lie
    /// further than `margin` outside. So the hysteresis (enter when distance
    /// + accuracy < radius, leave when distance − accuracy > radius) has one
    /// entry and one exit to find. The centre is past the middle of the
    /// track, so the test has time to set it up after the replay starts.
    static func crossedCircle(
        _ track: [(latitude: Double, longitude: Double)], margin: Double
    ) -> (centre: (latitude: Double, longitude: Double), radius: Double)? {
        for fraction in [0.6, 0.65, 0.55, 0.7] {
            let centre = track[Int(Double(track.count) * fraction)]
            let distances = track.map { metres(centre, $0) }
            for radius in stride(from: 60.0, through: 300, by: 10) {
                let inside = distances.indices.filter { distances[$0] < radius }
                guard let first = inside.first, let last = inside.last, last - first + 1 == inside.count,
                    distances.contains(where: { $0 < radius - margin }),
                    distances.first! > radius + margin, distances.last! > radius + margin
                else { continue }
                return (centre, radius)
            }
        }
        return nil
    }

    // MARK: - The crossing

    @Test(.enabled(if: MQTTTest.shouldRun, "skipped: \(MQTTTest.missingMessage)"))
    func aPlaceOnTheTrackIsEnteredAndLeftOnceOnTheSocketAndOnMQTT() throws {
        guard LiveReplay.requireTools() else { return }
        let margin = 30.0
        let track = try Self.track(LiveReplay.bundled("bundg_zeus_9"))
        #expect(track.count > 200)
        let circle = try #require(Self.crossedCircle(track, margin: margin), "the capture's track crosses no circle")

        print("bundg_zeus_9: \(track.count) points; circle at \(circle.centre), radius \(circle.radius) m")
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let subscriber = try MQTTSubscriber(port: broker.port)
        defer { subscriber.stop() }
        try subscriber.waitUntilSubscribed(port: broker.port)
        let topic = "owntracks/tester/boat"
        let replay = try LiveReplay(
            log: "bundg_zeus_9", cycle: 0.003,
            config: MQTTTest.config(port: broker.port, tid: "bt", device: "boat", minInterval: 5, maxInterval: 60))
        defer { replay.stop() }

        let (client, _) = try replay.daemon.connect()
        let saved = try client.request(
            "savePlace",
            [
                "name": "Buoy", "radius": circle.radius, "note": "computed from the capture", "shared": true,
                "coordinate": ["latitude": circle.centre.latitude, "longitude": circle.centre.longitude],
            ])
        let place = try #require(saved.resultObject?["place"] as? [String: Any], "\(saved)")
        #expect(place["name"] as? String == "Buoy" && place["shared"] as? Bool == true)
        #expect(try client.request("startMonitoring", ["places": ["Buoy"]]).succeeded)
        let (initial, observed) = try client.exchange("observe", ["keyPath": "regions", "options": ["initial"]])
        #expect(observed.succeeded)

        _ = replay.fake.waitForExit(timeout: 90)
        try MQTTTest.waitForReplayEnd(replay.daemon, timeout: 30)
        var messages = initial
        while let message = try? client.readMessage(timeout: 1) { messages.append(message) }
        let crossings = messages.filter { $0.event == "didEnterRegion" || $0.event == "didExitRegion" }
        #expect(crossings.map(\.event) == ["didEnterRegion", "didExitRegion"], "\(crossings)")
        for crossing in crossings {
            #expect((crossing["place"] as? [String: Any])?["name"] as? String == "Buoy")
            let location = try #require(crossing.location)
            let accuracy = location["horizontalAccuracy"] as? Double ?? 0
            #expect(accuracy < margin, "the circle was chosen for fixes this good: \(location)")
            let point = (latitude: location["latitude"] as! Double, longitude: location["longitude"] as! Double)
            let distance = Self.metres(circle.centre, point)
            if crossing.event == "didEnterRegion" {
                #expect(distance + accuracy < circle.radius, "entered only with the error circle inside")
            } else {
                #expect(distance - accuracy > circle.radius, "left only with the error circle outside")
            }
        }
        let regions = messages.filter { $0.event == "change" && $0["keyPath"] as? String == "regions" }
        #expect(regions.map { $0["new"] as? [String] ?? ["?"] } == [[], ["Buoy"], []], "\(regions)")

        // mosquitto: the place as a waypoint, the crossing as two transitions.
        let received = try subscriber.waitFor(timeout: 20, "two transitions") { all in
            all.filter { $0.topic == topic + "/event" }.count >= 2
        }
        let waypoints = try #require(received.last { $0.topic == topic + "/waypoints" }?.json)
        #expect(waypoints["_type"] as? String == "waypoints")
        let list = try #require(waypoints["waypoints"] as? [[String: Any]])
        #expect(list.count == 1)
        let waypoint = try #require(list.first)
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let created = try #require((place["createdAt"] as? String).flatMap { iso.date(from: $0) }, "\(place)")
        #expect(waypoint["_type"] as? String == "waypoint")
        #expect(waypoint["desc"] as? String == "Buoy")
        #expect(abs((waypoint["lat"] as? Double ?? 0) - circle.centre.latitude) < 1e-9)
        #expect(abs((waypoint["lon"] as? Double ?? 0) - circle.centre.longitude) < 1e-9)
        #expect(waypoint["rad"] as? Int == Int(circle.radius.rounded()))
        #expect(waypoint["tst"] as? Int == Int(created.timeIntervalSince1970))

        let transitions = received.filter { $0.topic == topic + "/event" }.compactMap(\.json)
        #expect(transitions.map { $0["event"] as? String } == ["enter", "leave"], "\(transitions)")
        for (transition, crossing) in zip(transitions, crossings) {
            #expect(transition["_type"] as? String == "transition")
            #expect(transition["desc"] as? String == "Buoy")
            #expect(transition["t"] as? String == "c")
            #expect(transition["tid"] as? String == "bt")
            #expect(transition["wtst"] as? Int == Int(created.timeIntervalSince1970))
            #expect(transition["acc"] is Int && transition["tst"] is Int)
            let location = try #require(crossing.location)
            // The forwarder's monitor and the client's see the same epochs.
            #expect(abs((transition["lat"] as? Double ?? 0) - (location["latitude"] as? Double ?? 1)) < 1e-9)
        }
    }

    // MARK: - Ops and bad input (no gpsd needed)

    static func message(_ reply: [String: Any]) -> String {
        (reply["error"] as? [String: Any])?["message"] as? String ?? ""
    }

    @Test func badInputIsRefusedByFieldAndNothingIsStored() throws {
        let daemon = try DaemonProcess(gpsdPort: nil)
        defer { daemon.stop() }
        let (client, _) = try daemon.connect()
        let (other, _) = try daemon.connect()
        let good: [String: Any] = ["name": "Haven", "coordinate": ["latitude": 52.7, "longitude": 5.29]]
        let cases: [([String: Any], String)] = [
            (good.merging(["radus": 5]) { $1 }, "radus"),
            (good.merging(["coordinate": ["latitude": 90.0001, "longitude": 5]]) { $1 }, "latitude"),
            (good.merging(["coordinate": ["latitude": 5, "longitude": -181]]) { $1 }, "longitude"),
            (good.merging(["coordinate": ["latitude": "52.7", "longitude": 5]]) { $1 }, "latitude"),
            (good.merging(["coordinate": ["latitude": 52.7, "longitude": NSNull()]]) { $1 }, "longitude"),
            (good.merging(["name": String(repeating: "n", count: 65)]) { $1 }, "name"),
            (good.merging(["name": "tab\there"]) { $1 }, "name"),
            (good.merging(["name": ""]) { $1 }, "name"),
            (good.merging(["radius": 0]) { $1 }, "radius"),
            (good.merging(["radius": 1e9]) { $1 }, "radius"),
            (good.merging(["radius": "100"]) { $1 }, "radius"),
            (good.merging(["note": String(repeating: "x", count: 1025)]) { $1 }, "note"),
            (good.merging(["shared": "yes"]) { $1 }, "shared"),
        ]
        for (arguments, field) in cases {
            let reply = try client.request("savePlace", arguments)
            #expect(reply.errorCode == "badRequest", "\(arguments): \(reply)")
            #expect(Self.message(reply).contains(field), "\(arguments): \(reply)")
        }
        #expect(try client.request("deletePlace", ["name": "Haven", "all": true]).errorCode == "badRequest")
        #expect(try client.request("startMonitoring", ["places": "Haven"]).errorCode == "badRequest")
        let empty = try client.request("places")
        #expect((empty.resultObject?["places"] as? [Any])?.isEmpty == true, "\(empty)")
        #expect(TestFiles.entries(daemon.stateDirectory + "/places").isEmpty, "nothing was written")
        #expect(try other.request("status").succeeded, "the daemon keeps serving everyone")

        // The current fix is needed when no coordinate is given.
        let here = try client.request("savePlace", ["name": "Here"])
        #expect(here.errorCode == "unavailable", "\(here)")
        // Bad input is named first, before the fix, a right or a place is looked at.
        for (op, arguments, field) in [
            ("savePlace", ["name": ""], "\"name\""), ("savePlace", ["name": " ", "shared": true], "\"name\""),
            ("deletePlace", ["name": ""], "\"name\""),
            ("startMonitoring", ["places": ["Nowhere", "\u{7}"]], "\"places\""),
        ] as [(String, [String: Any], String)] {
            let reply = try client.request(op, arguments)
            #expect(
                reply.errorCode == "badRequest" && Self.message(reply).contains(field), "\(op) \(arguments): \(reply)")
        }
        // Unknown names.
        #expect(try client.request("deletePlace", ["name": "Nowhere"]).errorCode == "notFound")
        #expect(try client.request("startMonitoring", ["places": ["Nowhere"]]).errorCode == "notFound")

        // And good input is stored, listed, replaced, deleted, and survives a restart.
        let saved = try client.request("savePlace", good.merging(["note": "mooring"]) { $1 })
        let place = try #require(saved.resultObject?["place"] as? [String: Any], "\(saved)")
        #expect(place["radius"] as? Double == 100 || place["radius"] as? Int == 100)
        #expect(place["owner"] as? Int == Int(getuid()))
        _ = try client.request("savePlace", ["name": "Dock", "coordinate": ["latitude": 52.71, "longitude": 5.3]])
        let replaced = try client.request("savePlace", good.merging(["radius": 250]) { $1 })
        #expect(
            (replaced.resultObject?["place"] as? [String: Any])?["createdAt"] as? String == place["createdAt"]
                as? String)
        #expect(try client.request("deletePlace", ["name": "Dock"]).succeeded)
        try daemon.restart()
        let (after, _) = try daemon.connect()
        let listed = try #require(try after.request("places").resultObject?["places"] as? [[String: Any]])
        #expect(listed.map { $0["name"] as? String } == ["Haven"])
        #expect(listed.first?["radius"] as? Int == 250 || listed.first?["radius"] as? Double == 250)
        #expect(listed.first?["note"] == nil, "saving again replaces the whole place")
    }

    @Test func theThousandAndFirstPlaceIsRefusedAndACorruptFileIsMovedAside() throws {
        // A thousand places on disk already (written here in the store's
        // format), and another user's file that is garbage.
        let state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "akloc-places-\(UUID().uuidString.prefix(8))"
        ).path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let places = state + "/places"
        try FileManager.default.createDirectory(atPath: places, withIntermediateDirectories: true)
        let uid = Int(getuid())
        let entries = (0..<1000).map { index in
            """
            {"name":"p\(index)","coordinate":{"latitude":52.7,"longitude":5.29},"radius":100,"owner":\(uid),\
            "createdAt":"2027-01-15T08:00:00Z","shared":false}
            """
        }
        try "{\"version\":1,\"owner\":\(uid),\"places\":[\(entries.joined(separator: ","))]}"
            .write(toFile: places + "/\(uid).json", atomically: true, encoding: .utf8)
        try "{\"version\":1,\"owner\":4242,\"places\":[{\"name\":".write(
            toFile: places + "/4242.json", atomically: true, encoding: .utf8)

        let daemon = try DaemonProcess(gpsdPort: nil, extraArguments: ["--state-dir", state])
        defer { daemon.stop() }
        let (client, _) = try daemon.connect()
        let listed = try #require(try client.request("places").resultObject?["places"] as? [Any])
        #expect(listed.count == 1000)
        let more = try client.request(
            "savePlace", ["name": "one more", "coordinate": ["latitude": 1, "longitude": 1]])
        #expect(more.errorCode == "badRequest" && Self.message(more).contains("name"), "\(more)")
        #expect(Self.message(more).contains("1000"))
        // Replacing one at the limit is fine.
        #expect(
            try client.request("savePlace", ["name": "p7", "coordinate": ["latitude": 1, "longitude": 1]]).succeeded)
        let log = daemon.process.stderr()
        #expect(log.contains("4242.json") && log.contains("moved it to"), "\(log)")
        #expect(TestFiles.entries(places).contains { $0.hasPrefix("4242.json.corrupt-") })
    }

    @Test(.enabled(if: TestMount.shouldRun, "needs root to mount a tmpfs"), arguments: TestMount.Fault.allCases)
    func anAcknowledgedSaveIsOnDiskOrRefused(fault: TestMount.Fault) throws {
        let mount = try TestMount(sizeKiB: 64)
        defer { mount.unmount() }
        let state = mount.path + "/state"
        let daemon = try DaemonProcess(gpsdPort: nil, extraArguments: ["--state-dir", state])
        defer { daemon.stop() }
        let (client, _) = try daemon.connect()
        let at: [String: Any] = ["latitude": 52.7, "longitude": 5.29]
        #expect(try client.request("savePlace", ["name": "Haven", "coordinate": at]).succeeded)
        #expect(try client.request("savePlace", ["name": "Dock", "coordinate": at]).succeeded)
        let file = state + "/places/\(getuid()).json"
        let before = try String(contentsOfFile: file, encoding: .utf8)

        try mount.inject(fault)
        let save = try client.request("savePlace", ["name": "Quay", "coordinate": at])
        #expect(save.errorCode == "storageFailed" && Self.message(save).contains(fault.errnoName), "\(save)")
        let delete = try client.request("deletePlace", ["name": "Dock"])
        #expect(delete.errorCode == "storageFailed", "\(delete)")
        let listed = try #require(try client.request("places").resultObject?["places"] as? [[String: Any]])
        #expect(listed.map { $0["name"] as? String } == ["Haven", "Dock"], "nothing changed in memory")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == before, "nor on disk")

        try mount.repair(fault)
        try daemon.restart()
        let (after, _) = try daemon.connect()
        let again = try #require(try after.request("places").resultObject?["places"] as? [[String: Any]])
        #expect(again.map { $0["name"] as? String } == ["Haven", "Dock"])
        #expect(try after.request("deletePlace", ["name": "Dock"]).succeeded)
    }
}
