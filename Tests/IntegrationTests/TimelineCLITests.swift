import AklocTestSupport
import Foundation
import Testing

/// `akloc timeline` as a user runs it, against a real aklocd with the
/// tree's geo data: a day imported with `akloc track import`, printed in
/// the time zone of where it happened, exported as JSON, as GPX that
/// python3-gpxpy reads and as GeoJSON that python3-geojson validates, summed
/// with --stats; bad input refused naming the field, the daemon serving.
@Suite(.serialized, .enabled(if: TrackTools.missing.isEmpty || GPSDTools.required, "skipped: no python3-gpxpy"))
struct TimelineCLITests {
    static let config = "[track]\nretention-days = 36500\n" + GeoLookupTests.dataConfig
    /// Enkhuizen's harbour, "Home" below.
    static let home = (latitude: 52.7033, longitude: 5.2917)

    /// 2024-06-01 (CEST, UTC+2): home 08:00-12:30 (a fix every 30 s,
    /// jitter of metres), a drive of about 14 km south-west in 25 min (a fix
    /// every 5 s), then still at the other end until 18:00.
    static func day() -> String {
        let start = 1_717_221_600  // 2024-06-01T06:00:00Z
        var text = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        text += #"<gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>"# + "\n"
        func point(_ seconds: Int, _ latitude: Double, _ longitude: Double) {
            text +=
                #"<trkpt lat="\#(latitude)" lon="\#(longitude)"><time>\#(TrackImportTests.iso(seconds))</time></trkpt>"#
                + "\n"
        }
        for step in 0..<540 {  // 4 h 30 min
            point(
                start + step * 30, home.latitude + Double(step % 5 - 2) * 0.000_02,
                home.longitude + Double(step % 3 - 1) * 0.000_03)
        }
        let driveStart = start + 540 * 30
        let end = (latitude: home.latitude - 0.09, longitude: home.longitude - 0.13)
        for step in 1...300 {  // 25 min
            let fraction = Double(step) / 300
            point(
                driveStart + step * 5, home.latitude + (end.latitude - home.latitude) * fraction,
                home.longitude + (end.longitude - home.longitude) * fraction)
        }
        let stayStart = driveStart + 1500
        for step in 1...650 {  // until 18:00
            point(
                stayStart + step * 30, end.latitude + Double(step % 4 - 2) * 0.000_02,
                end.longitude + Double(step % 3 - 1) * 0.000_02)
        }
        return text + "</trkseg></trk></gpx>\n"
    }

    static func imported() throws -> DaemonProcess {
        let daemon = try DaemonProcess(gpsdPort: nil, config: Self.config)
        let input = try TrackImportTests.write(Self.day(), "day.gpx", in: daemon)
        let imported = try TrackImportTests.akloc(daemon, ["track", "import", input])
        #expect(imported.exitCode == 0, "\(imported.stderr())")
        let saved = try TrackImportTests.akloc(
            daemon, ["places", "add", "Home", "--at", "\(home.latitude),\(home.longitude)", "--radius", "150"])
        #expect(saved.exitCode == 0, "\(saved.stderr())")
        return daemon
    }

    static func matches(_ line: Substring, _ pattern: String) -> Bool {
        line.range(of: "^" + pattern + "$", options: .regularExpression) != nil
    }

    @Test func aDayIsPrintedInTheTimeZoneOfWhereItHappened() throws {
        let daemon = try Self.imported()
        defer { daemon.stop() }
        let run = try TrackImportTests.akloc(daemon, ["timeline", "2024-06-01"])
        #expect(run.exitCode == 0, "\(run.stderr())")
        let lines = run.stdout().split(separator: "\n")
        #expect(lines.count == 3, "\(run.stdout())")
        guard lines.count == 3 else { return }
        // Local (CEST) times: the fixes are 06:00Z-16:00Z.
        #expect(Self.matches(lines[0], "08:00–12:3[0-9]  Home  4 h 3[0-9] min"), "\(lines[0])")
        #expect(
            Self.matches(lines[1], "12:3[0-9]–12:5[0-9]  1[34]\\.[0-9] km in 2[0-9] min, max [0-9]+ km/h"),
            "\(lines[1])")
        #expect(Self.matches(lines[2], "12:5[0-9]–  near [^,]+, North Holland, Netherlands"), "\(lines[2])")
        // The same day by range: a date line, then the same lines.
        let range = try TrackImportTests.akloc(
            daemon, ["timeline", "--since", "2024-06-01T00:00Z", "--until", "2024-06-01T23:00Z"])
        #expect(range.stdout() == "2024-06-01\n" + run.stdout(), "\(range.stderr())")
        // A day with nothing.
        let empty = try TrackImportTests.akloc(daemon, ["timeline", "2024-05-20"])
        #expect(empty.exitCode == 0 && empty.stdout() == "no visits or trips in that time\n", "\(empty.stderr())")
    }

    @Test func jsonGPXAndGeoJSONCarryTheVisitsAndTrips() throws {
        let daemon = try Self.imported()
        defer { daemon.stop() }
        let json = try TrackImportTests.akloc(daemon, ["timeline", "2024-06-01", "--json"])
        #expect(json.exitCode == 0, "\(json.stderr())")
        let parsed = try JSONSerialization.jsonObject(with: Data(json.stdout().utf8)) as? [String: Any]
        let visits = parsed?["visits"] as? [[String: Any]] ?? []
        let trips = parsed?["trips"] as? [[String: Any]] ?? []
        #expect(visits.count == 2 && trips.count == 1, "\(json.stdout())")
        #expect(visits.first?["place"] as? String == "Home")
        #expect((visits.first?["timeZone"] as? [String: Any])?["identifier"] as? String == "Europe/Amsterdam")

        let gpx = daemon.directory.appendingPathComponent("day.out.gpx").path
        let exported = try TrackImportTests.akloc(daemon, ["timeline", "2024-06-01", "--gpx", "-o", gpx])
        #expect(exported.exitCode == 0, "\(exported.stderr())")
        let gpxSummary = try TrackTools.python(
            """
            import sys, gpxpy
            gpx = gpxpy.parse(open(sys.argv[1]))
            print(len(gpx.waypoints), [w.name for w in gpx.waypoints][0])
            segments = [s for t in gpx.tracks for s in t.segments]
            print(len(segments), len(segments[0].points), round(segments[0].length_2d() / 1000))
            """, [gpx])
        let gpxLines = gpxSummary.split(separator: "\n")
        #expect(gpxLines.first == "2 Home", "\(gpxSummary)")
        // The trip's segment: its recorded points (the drive's 300, give or
        // take the ends the detector gives the visits), about 14 km long.
        let segment = gpxLines.dropFirst().first?.split(separator: " ") ?? []
        #expect(segment.first == "1" && segment.last.map { ["13", "14", "15"].contains($0) } == true, "\(gpxSummary)")
        if segment.count == 3, let points = Int(segment[1]) { #expect(points > 250 && points < 320) }

        let geojson = daemon.directory.appendingPathComponent("day.geojson").path
        let features = try TrackImportTests.akloc(daemon, ["timeline", "2024-06-01", "--geojson", "-o", geojson])
        #expect(features.exitCode == 0, "\(features.stderr())")
        let geoSummary = try TrackTools.python(
            """
            import sys, geojson
            collection = geojson.load(open(sys.argv[1]))
            print(collection.is_valid, sorted(f["geometry"]["type"] for f in collection["features"]))
            """, [geojson])
        #expect(geoSummary == "True ['LineString', 'Point', 'Point']\n", "\(geoSummary)")
    }

    @Test func statsSumCountriesDistancesAndPlaces() throws {
        let daemon = try Self.imported()
        defer { daemon.stop() }
        let run = try TrackImportTests.akloc(
            daemon, ["timeline", "--stats", "--since", "2024-05-01", "--until", "2024-07-01"])
        #expect(run.exitCode == 0, "\(run.stderr())")
        let text = run.stdout()
        #expect(text.contains("  NL  Netherlands: 1 day, 0 nights\n"), "\(text)")
        #expect(text.range(of: "  2024-06  1[34]\\.[0-9] km\n", options: .regularExpression) != nil, "\(text)")
        #expect(text.range(of: "  2024-06-01  1[34]\\.[0-9] km\n", options: .regularExpression) != nil, "\(text)")
        #expect(text.range(of: "  Home  4 h 3[0-9] min\n", options: .regularExpression) != nil, "\(text)")
    }

    @Test func badInputIsRefusedNamingTheField() throws {
        let daemon = try DaemonProcess(gpsdPort: nil, config: Self.config)
        defer { daemon.stop() }
        let cases: [([String], String)] = [
            (["timeline", "2026-02-30"], "DAY must be a date that exists"),
            (["timeline", "yesterday"], "DAY must be a date that exists"),
            (["timeline", "2026-13-01"], "DAY must be a date that exists"),
            (
                ["timeline", "--since", "2026-12-01", "--until", "2026-11-01"],
                "--since (2026-12-01T00:00:00.000Z) is after --until"
            ),
            (["timeline", "--since", "2026-02-30"], "since"),
            (["timeline", "--until", "soon"], "--until needs"),
            (["timeline", "2026-11-30", "--since", "1d"], "give a DAY or --since/--until, not both"),
            (["timeline", "--json", "--gpx"], "--json and --gpx cannot be combined"),
            (["timeline", "2026-11-30", "2026-12-01"], "at most one DAY"),
            (["timeline", "-o", "x.gpx"], "-o applies to --json, --gpx and --geojson"),
        ]
        for (arguments, message) in cases {
            let run = try TrackImportTests.akloc(daemon, arguments)
            #expect(run.exitCode != 0, "\(arguments) was accepted")
            #expect(run.stderr().contains(message), "\(arguments): \(run.stderr())")
        }
        // Still serving.
        let status = try TrackImportTests.akloc(daemon, ["timeline", "2024-06-01"])
        #expect(status.exitCode == 0, "\(status.stderr())")
    }
}
