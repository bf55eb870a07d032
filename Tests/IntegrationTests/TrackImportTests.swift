import AklocTestSupport
import Foundation
import Testing

/// `akloc track import` as a user runs it, against a real aklocd: files
/// written here in each format, read back through `akloc track` and, for
/// GPX, through Debian's python3-gpxpy; the timeline of an imported day;
/// bad files refused with their offset, nothing imported, the daemon serving.
@Suite(.serialized, .enabled(if: TrackTools.missing.isEmpty || GPSDTools.required, "skipped: no python3-gpxpy"))
struct TrackImportTests {
    /// Years of history are kept (the default 30 days would refuse them).
    static let config = """
        [track]
        retention-days = 36500
        max-size = 1G
        """

    static func akloc(_ daemon: DaemonProcess, _ arguments: [String]) throws -> TestProcess {
        let process = try TestProcess(Binaries.akloc, ["--socket", daemon.socketPath] + arguments)
        process.waitForExit(timeout: 120)
        return process
    }

    static func write(_ text: String, _ name: String, in daemon: DaemonProcess) throws -> String {
        let path = daemon.directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func iso(_ seconds: Int) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// A GPX 1.1 track of two segments over two days, elevation on some points.
    static func gpx(points count: Int, start: Int, version: String = "1.1") -> String {
        let namespace = "http://www.topografix.com/GPX/\(version == "1.1" ? "1/1" : "1/0")"
        var text = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        text += #"<gpx version="\#(version)" creator="test" xmlns="\#(namespace)"><trk><trkseg>"# + "\n"
        for index in 0..<count {
            if index == count / 2 { text += "</trkseg><trkseg>\n" }
            let latitude = 52.0 + Double(index) * 0.000_123_4
            let longitude = 4.0 + Double(index % 97) * 0.000_987_6
            let elevation = index % 3 == 0 ? "<ele>\(Double(index % 50) + 0.5)</ele>" : ""
            text +=
                #"<trkpt lat="\#(latitude)" lon="\#(longitude)">\#(elevation)<time>\#(iso(start + index * 400))</time></trkpt>"#
            text += "\n"
        }
        return text + "</trkseg></trk></gpx>\n"
    }

    @Test func anImportedGPXComesBackAsGPXWithTheSamePoints() throws {
        guard TrackTools.missing.isEmpty else {
            Issue.record("AKLOC_REQUIRE_TOOLS=1 and missing \(TrackTools.missing)")
            return
        }
        let daemon = try DaemonProcess(gpsdPort: nil, config: Self.config)
        defer { daemon.stop() }
        let start = 1_709_280_000  // 2024-03-01T08:00:00Z
        let input = try Self.write(Self.gpx(points: 500, start: start), "in.gpx", in: daemon)

        let first = try Self.akloc(daemon, ["track", "import", input])
        #expect(first.exitCode == 0, "\(first.stderr())")
        #expect(first.stdout() == "imported 500 of 500 points into 3 day(s); 0 were already in the track\n")
        let again = try Self.akloc(daemon, ["track", "import", input])
        #expect(again.exitCode == 0, "\(again.stderr())")
        #expect(again.stdout() == "imported 0 of 500 points into 0 day(s); 500 were already in the track\n")

        let output = daemon.directory.appendingPathComponent("out.gpx").path
        let export = try Self.akloc(
            daemon, ["track", "--since", "2024-03-01", "--until", "2024-03-05", "--format", "gpx", "-o", output])
        #expect(export.exitCode == 0, "\(export.stderr())")
        let script = """
            import sys, gpxpy
            for path in sys.argv[1:]:
                gpx = gpxpy.parse(open(path))
                points = [p for t in gpx.tracks for s in t.segments for p in s.points]
                print(len(points))
                for p in points:
                    print(repr(p.latitude), repr(p.longitude), p.elevation, p.time.isoformat())
                print('--')
            """
        let parsed = try TrackTools.python(script, [input, output]).components(separatedBy: "--\n")
        #expect(parsed.count == 3)
        #expect(parsed[0].hasPrefix("500\n"))
        #expect(parsed[0] == parsed[1], "gpxpy reads the same points, times and elevations back")

        // GPX 1.0 too, into days of its own.
        let old = try Self.write(Self.gpx(points: 120, start: 1_104_566_400, version: "1.0"), "old.gpx", in: daemon)
        let imported10 = try Self.akloc(daemon, ["track", "import", old])
        #expect(imported10.stdout() == "imported 120 of 120 points into 1 day(s); 0 were already in the track\n")
        let output10 = daemon.directory.appendingPathComponent("out10.gpx").path
        _ = try Self.akloc(
            daemon, ["track", "--since", "2005-01-01", "--until", "2005-01-02", "--format", "gpx", "-o", output10])
        let parsed10 = try TrackTools.python(script, [old, output10]).components(separatedBy: "--\n")
        #expect(parsed10.count == 3 && parsed10[0].hasPrefix("120\n") && parsed10[0] == parsed10[1])
    }

    /// gpxpy's real korita-zbevnica.gpx (GPSBabel, GPX 1.0) as it is: of its
    /// 871 track points the 358 of its first track have no `<time>`. Those
    /// are passed over and counted; the 513 with a time are imported and
    /// come back as they were.
    @Test func aRealGPXWithPointsWithoutATimeImportsTheTimedOnes() throws {
        let daemon = try DaemonProcess(gpsdPort: nil, config: Self.config)
        defer { daemon.stop() }
        let input = Binaries.packageRoot.appendingPathComponent("Tests/Fixtures/timeline/korita-zbevnica.gpx").path
        let imported = try Self.akloc(daemon, ["track", "import", input])
        #expect(imported.exitCode == 0, "\(imported.stderr())")
        #expect(
            imported.stdout()
                == "imported 513 of 513 points into 1 day(s); 0 were already in the track; "
                + "358 points without a time were passed over\n")

        let export = try Self.akloc(
            daemon, ["track", "--since", "2010-10-01", "--until", "2010-10-06", "--format", "csv"])
        #expect(export.exitCode == 0, "\(export.stderr())")
        let exported = export.stdout().split(separator: "\n").dropFirst()
        // Python's own XML parser counts the file's points, timed and not.
        let script = """
            import sys
            from xml.etree import ElementTree
            root = ElementTree.parse(sys.argv[1]).getroot()
            namespace = root.tag.split("}")[0] + "}"
            points = root.iter(namespace + "trkpt")
            timed = [p for p in points if p.find(namespace + "time") is not None]
            print(sum(1 for _ in root.iter(namespace + "trkpt")), len(timed))
            """
        #expect(try TrackTools.python(script, [input]) == "871 513\n")
        #expect(exported.count == 513, "the timed points, each once")
    }

    /// A day of Google Takeout: home until 12:00 (a point every 2 minutes,
    /// jitter of some metres), a drive of 12 km, work until 17:30.
    static func takeoutDay(start: Int) -> String {
        var records: [String] = []
        func add(_ seconds: Int, _ latitude: Double, _ longitude: Double, accuracy: Int) {
            let e7 = { (value: Double) in Int((value * 1e7).rounded()) }
            records.append(
                #"{"latitudeE7":\#(e7(latitude)),"longitudeE7":\#(e7(longitude)),"accuracy":\#(accuracy),"#
                    + #""activity":[{"timestamp":"x","activity":[{"type":"STILL","confidence":90}]}],"#
                    + #""timestamp":"\#(iso(seconds))"}"#)
        }
        for step in 0..<120 {  // 08:00-12:00
            add(
                start + step * 120, 52.370_0 + Double(step % 5) * 0.000_02, 4.890_0 + Double(step % 3) * 0.000_03,
                accuracy: 15)
        }
        for step in 0..<30 {  // 12:00-12:30, north-east
            add(
                start + 14_400 + step * 60, 52.370_0 + Double(step) * 0.003, 4.890_0 + Double(step) * 0.003, accuracy: 8
            )
        }
        for step in 0..<150 {  // 12:30-17:30
            add(start + 16_200 + step * 120, 52.460_0 + Double(step % 4) * 0.000_02, 4.980_0, accuracy: 20)
        }
        return #"{"locations":["# + records.joined(separator: ",\n") + "]}\n"
    }

    @Test func anImportedTakeoutDayHasVisitsAndATrip() throws {
        let daemon = try DaemonProcess(gpsdPort: nil, config: Self.config)
        defer { daemon.stop() }
        let start = 1_717_228_800  // 2024-06-01T08:00:00Z
        let input = try Self.write(Self.takeoutDay(start: start), "Records.json", in: daemon)
        let imported = try Self.akloc(daemon, ["track", "import", input])
        #expect(imported.exitCode == 0, "\(imported.stderr())")
        #expect(imported.stdout() == "imported 300 of 300 points into 1 day(s); 0 were already in the track\n")

        let (client, _) = try daemon.connect()
        let range: [String: Any] = ["since": "2024-06-01", "until": "2024-06-02"]
        let visits = try #require(
            (try client.request("visits", range)["result"] as? [String: Any])?["visits"] as? [[String: Any]])
        #expect(visits.count == 2, "\(visits)")
        #expect(visits.first?["arrival"] as? String == "2024-06-01T08:00:00.000Z")
        if let departure = visits.first?["departure"] as? String {
            #expect(departure.hasPrefix("2024-06-01T11:5") || departure.hasPrefix("2024-06-01T12:0"), "\(departure)")
        } else {
            Issue.record("the first visit has no departure: \(visits)")
        }
        let trips = try #require(
            (try client.request("trips", range)["result"] as? [String: Any])?["trips"] as? [[String: Any]])
        #expect(trips.count == 1, "\(trips)")
        if let distance = trips.first?["distance"] as? Double { #expect(distance > 10_000 && distance < 14_000) }
    }

    @Test func aTimelineJSONIsImportedWithItsVisitsAsStays() throws {
        let daemon = try DaemonProcess(gpsdPort: nil, config: Self.config)
        defer { daemon.stop() }
        let text = """
            {"semanticSegments": [
              {"startTime": "2024-09-02T08:00:00.000+02:00", "endTime": "2024-09-02T10:00:00.000+02:00",
               "visit": {"hierarchyLevel": 0, "topCandidate": {"placeLocation": {"latLng": "48.8566°, 2.3522°"}}}},
              {"startTime": "2024-09-02T10:00:00.000+02:00", "endTime": "2024-09-02T11:00:00.000+02:00",
               "timelinePath": [{"point": "48.87°, 2.36°", "time": "2024-09-02T10:20:00.000+02:00"},
                                {"point": "48.89°, 2.38°", "time": "2024-09-02T10:40:00.000+02:00"}]}],
             "rawSignals": [{"position": {"LatLng": "48.8566°, 2.3522°", "accuracyMeters": 10,
                             "timestamp": "2024-09-02T09:00:00.000+02:00"}}],
             "userLocationProfile": {}}
            """
        let input = try Self.write(text, "Timeline.json", in: daemon)
        let imported = try Self.akloc(daemon, ["track", "import", input])
        #expect(imported.exitCode == 0, "\(imported.stderr())")
        #expect(imported.stdout() == "imported 5 of 5 points into 1 day(s); 0 were already in the track\n")
        let csv = try Self.akloc(
            daemon, ["track", "--since", "2024-09-02", "--until", "2024-09-03", "--format", "csv"])
        let times = csv.stdout().split(separator: "\n").dropFirst().map { $0.split(separator: ",")[0] }
        #expect(
            times == [
                "2024-09-02T06:00:00.000Z", "2024-09-02T07:00:00.000Z", "2024-09-02T08:00:00.000Z",
                "2024-09-02T08:20:00.000Z", "2024-09-02T08:40:00.000Z",
            ], "in time order, whatever the file's order")
    }

    @Test func badFilesImportNothingAndNameTheirOffset() throws {
        let daemon = try DaemonProcess(gpsdPort: nil, config: Self.config)
        defer { daemon.stop() }
        let good = try Self.write(Self.takeoutDay(start: 1_717_228_800), "good.json", in: daemon)
        let full = Self.takeoutDay(start: 1_717_228_800)
        let cut = try Self.write(String(full.prefix(full.utf8.count / 2)), "cut.json", in: daemon)
        let future = try Self.write(
            #"{"locations":[{"latitudeE7":1,"longitudeE7":2,"timestamp":"2020-01-01T00:00:00Z"},"#
                + #"{"latitudeE7":1,"longitudeE7":2,"timestamp":"2099-01-01T00:00:00Z"}]}"#, "future.json", in: daemon)
        let wrongType = try Self.write(
            #"{"locations":[{"latitudeE7":"52","longitudeE7":2,"timestamp":"2020-01-01T00:00:00Z"}]}"#, "type.json",
            in: daemon)
        let garbage = try Self.write("PK\u{3}\u{4} this is a zip", "Takeout.zip", in: daemon)
        let cases: [(String, [String], String)] = [
            ("cut", [good, cut], "cut.json: at byte \(full.utf8.count / 2): the file ends inside"),
            ("future", [future], #"future.json: at byte 82: "points[1]": 2099-01-01T00:00:00.000Z is in the future"#),
            (
                "type", [wrongType],
                "type.json: at byte 14: locations[0].latitudeE7 must be a whole number, not a string"
            ),
            ("garbage", [garbage], "Takeout.zip: at byte 0: neither GPX (XML) nor a Google location export (JSON)"),
            ("missing", [daemon.directory.appendingPathComponent("none.gpx").path], "none.gpx: "),
        ]
        for (name, files, message) in cases {
            let refused = try Self.akloc(daemon, ["track", "import"] + files)
            #expect(refused.exitCode == 1, "\(name): \(refused.stderr())")
            #expect(refused.stderr().contains(message), "\(name): \(refused.stderr())")
            // Nothing of the good file either, and the daemon answers at once.
            let export = try Self.akloc(daemon, ["track", "--since", "2000-01-01", "--format", "csv"])
            #expect(export.exitCode == 0)
            #expect(export.stdout().split(separator: "\n").count == 1, "\(name): only the CSV header")
        }
        let track = daemon.stateDirectory + "/track"
        let left = try FileManager.default.contentsOfDirectory(atPath: track)
        #expect(left.isEmpty, "no staging directory is left: \(left)")
        let status = try Self.akloc(daemon, ["status"])
        #expect(status.exitCode == 0)
        let usage = try Self.akloc(daemon, ["track", "import"])
        #expect(usage.exitCode == 64 && usage.stderr().contains("track import needs at least one FILE"))
    }
}
