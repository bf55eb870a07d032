import AklocTestSupport
import Foundation
import Testing

/// The python readers the export tests check akloc's files with (Debian
/// python3-gpxpy, gpxinfo, python3-geojson): required under AKLOC_REQUIRE_TOOLS=1.
/// Debian's own /usr/bin/python3, which has them (a pyenv python3 on PATH does not).
enum TrackTools {
    static var missing: [String] {
        var missing: [String] = []
        if TestProcess.which("gpxinfo") == nil { missing.append("gpxinfo") }
        for module in ["gpxpy", "geojson"] {
            let probe = try? TestProcess("/usr/bin/python3", ["-c", "import \(module)"])
            if probe?.waitForExit(timeout: 20) != 0 { missing.append("python3-\(module)") }
        }
        return missing
    }

    static var shouldRun: Bool { GPSDTools.shouldRun && (GPSDTools.required || missing.isEmpty) }

    /// Runs `python3 -c script args…` and returns its stdout, or records why it failed.
    static func python(_ script: String, _ arguments: [String]) throws -> String {
        let process = try TestProcess("/usr/bin/python3", ["-c", script] + arguments)
        let code = process.waitForExit(timeout: 60)
        #expect(code == 0, "python3 failed: \(process.stderr())")
        return process.stdout()
    }
}

/// Issue 13 on real gpsd replays: every recorded point comes back through
/// `akloc track`, as GPX that gpxpy and gpxinfo read, and GeoJSON that
/// python3-geojson finds valid; SIGKILLs never lose a synced point nor
/// return a corrupt one.
@Suite(.serialized, .enabled(if: TrackTools.shouldRun, "skipped: missing gpsd tools or python3-gpxpy/geojson"))
struct TrackExportTests {
    /// Every epoch becomes a point, so the count can be checked against aklocd's own.
    static let everyEpoch = """
        [track]
        min-interval = 0
        distance = 0
        heartbeat = 0
        """

    /// (receivedAt, latitude, longitude) of each `track recorded` debug line.
    static func recorded(_ stderr: String) -> [String] {
        stderr.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "track recorded segment ") else { return nil }
            return String(line[range.upperBound...])
        }
    }

    static func cli(_ daemon: DaemonProcess, _ arguments: [String]) throws -> TestProcess {
        let process = try TestProcess(Binaries.akloc, ["--socket", daemon.socketPath, "track"] + arguments)
        #expect(process.waitForExit(timeout: 60) == 0, "akloc track \(arguments): \(process.stderr())")
        return process
    }

    @Test func everyRecordedPointComesBackAsGPXAndGeoJSON() throws {
        guard LiveReplay.requireTools() else { return }
        guard TrackTools.missing.isEmpty else {
            Issue.record(
                "AKLOC_REQUIRE_TOOLS=1 and missing \(TrackTools.missing) (apt install python3-gpxpy gpxinfo python3-geojson)"
            )
            return
        }
        let replay = try LiveReplay(log: "haicom-305N", cycle: nil, config: Self.everyEpoch)
        defer { replay.stop() }
        _ = replay.fake.waitForExit(timeout: 60)
        try MQTTTest.waitForReplayEnd(replay.daemon)
        let recorded = Self.recorded(replay.daemon.process.stderr())
        let (client, _) = try replay.daemon.connect()
        let status = try #require(try client.request("status")["result"] as? [String: Any])
        let fixes = try #require((status["counters"] as? [String: Any])?["fixesReceived"] as? Int)
        #expect(fixes > 50)
        #expect(recorded.count == fixes, "every epoch is a point with min-interval = heartbeat = 0")

        // NDJSON: the points exactly as recorded, in order.
        let ndjson = try Self.cli(replay.daemon, ["--format", "ndjson"]).stdout()
        let points = try ndjson.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(points.count == recorded.count)
        let latitudes = points.compactMap { $0["latitude"] as? Double }
        let longitudes = points.compactMap { $0["longitude"] as? Double }
        for (index, line) in recorded.enumerated() where index < points.count {
            let fields = line.split(separator: " ")
            // "SEGMENT at RECEIVEDAT LATITUDE LONGITUDE"
            #expect(fields.count == 5)
            guard fields.count == 5 else { continue }
            #expect(Double(fields[3]) == latitudes[index] && Double(fields[4]) == longitudes[index], "\(line)")
            #expect(points[index]["receivedAt"] as? String == String(fields[2]), "\(line)")
            #expect(points[index]["segment"] as? Int == Int(fields[0]), "\(line)")
        }

        // GPX through gpxpy: the same points, with time, elevation, speed and course.
        let directory = replay.daemon.directory.path
        let gpxPath = directory + "/track.gpx"
        _ = try Self.cli(replay.daemon, ["--format", "gpx", "-o", gpxPath])
        let parsed = try TrackTools.python(
            """
            import sys, gpxpy
            gpx = gpxpy.parse(open(sys.argv[1]))
            for track in gpx.tracks:
                for number, segment in enumerate(track.segments):
                    for p in segment.points:
                        ext = {e.tag.split('}')[-1]: e for e in p.extensions}
                        tpx = {c.tag.split('}')[-1]: c.text for c in ext.get('TrackPointExtension', [])}
                        print(number, repr(p.latitude), repr(p.longitude), p.elevation, p.time.isoformat(),
                              tpx.get('speed'), tpx.get('course'), 'horizontalAccuracy' in ext)
            """, [gpxPath])
        let rows = parsed.split(separator: "\n").map { $0.split(separator: " ") }
        #expect(rows.count == points.count)
        for (row, point) in zip(rows, points) {
            #expect(Double(row[1]) == point["latitude"] as? Double && Double(row[2]) == point["longitude"] as? Double)
            if let altitude = point["altitude"] as? Double { #expect(Double(row[3]) == altitude) }
            if let speed = point["speed"] as? Double { #expect(Double(row[5]) == speed) }
            if let course = point["course"] as? Double { #expect(Double(row[6]) == course) }
            #expect(row[7] == (point["horizontalAccuracy"] == nil ? "False" : "True"))
        }
        #expect(rows.filter { $0[3] != "None" }.count > 0 && rows.filter { $0[5] != "None" }.count > 0)
        let segments = Set(points.compactMap { $0["segment"] as? Int })
        #expect(Set(rows.map { String($0[0]) }).count == segments.count)

        // gpxinfo agrees on the point count, and its length on `akloc track stats`.
        let info = try TestProcess("gpxinfo", [gpxPath])
        #expect(info.waitForExit(timeout: 60) == 0)
        let summary = info.stdout()
        #expect(summary.contains("Points: \(points.count)"), "\(summary)")
        let stats = try Self.cli(replay.daemon, ["stats"]).stdout()
        let total = try #require(stats.split(separator: "\n").first { $0.hasPrefix("total") })
        let ours = try #require(Double(total.split(separator: " ")[3]))
        let theirs = try #require(
            summary.split(separator: "\n").first { $0.contains("Length 2D:") }.flatMap {
                Double($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces).dropLast(2))
            })
        #expect(theirs > 0.1)
        #expect(abs(ours - theirs) <= max(0.002, theirs * 0.005), "akloc \(ours) km, gpxinfo \(theirs) km")

        // GeoJSON through python3-geojson: valid, one LineString per segment, every position.
        let geojsonPath = directory + "/track.geojson"
        _ = try Self.cli(replay.daemon, ["--format", "geojson", "-o", geojsonPath])
        let checked = try TrackTools.python(
            """
            import sys, geojson
            collection = geojson.load(open(sys.argv[1]))
            print(collection.is_valid, len(collection['features']),
                  sum(len(f['geometry']['coordinates']) if f['geometry']['type'] == 'LineString' else 1
                      for f in collection['features']),
                  all(len(f['properties']['coordinateProperties']['times'])
                      == (len(f['geometry']['coordinates']) if f['geometry']['type'] == 'LineString' else 1)
                      for f in collection['features']))
            """, [geojsonPath])
        #expect(
            checked.trimmingCharacters(in: .whitespacesAndNewlines) == "True \(segments.count) \(points.count) True")

        // Bad input: the CLI's own checks (status 64), and the daemon's
        // badRequest naming the field (status 1); the daemon serves on.
        let bad: [([String], Int32, String)] = [
            (["--since", "yesterday"], 64, "--since"), (["--format", "kml"], 64, "--format"),
            (["--since", "2026-13-01"], 1, "\"since\""), (["--since", "1h", "--until", "2h"], 1, "\"since\""),
            (["--until", "2026-02-30T10:00Z"], 1, "\"until\""), (["--simplify", "-3"], 64, "--simplify"),
        ]
        for (arguments, status, field) in bad {
            let process = try TestProcess(Binaries.akloc, ["--socket", replay.daemon.socketPath, "track"] + arguments)
            #expect(process.waitForExit(timeout: 30) == status, "\(arguments): \(process.stderr())")
            #expect(process.stderr().contains(field), "\(arguments): \(process.stderr())")
        }

        // CSV: a header and a line per point.
        let csv = try Self.cli(replay.daemon, ["--format", "csv"]).stdout()
        #expect(csv.split(separator: "\n").count == points.count + 1)
    }

    /// bundg_zeus_9 starts as gpsd does before it knows the date: three
    /// fixes without a time. None is recorded (docs/track.md), so the one
    /// segment is all on the receiver's clock (2018), and `akloc track stats`
    /// gives its real duration, every line ending in a newline.
    @Test func aStartWithFixesWithoutATimeKeepsTheTrackOnTheReceiversClock() throws {
        guard LiveReplay.requireTools() else { return }
        let replay = try LiveReplay(log: "bundg_zeus_9", cycle: nil, config: Self.everyEpoch)
        defer { replay.stop() }
        _ = replay.fake.waitForExit(timeout: 120)
        try MQTTTest.waitForReplayEnd(replay.daemon)
        let (client, _) = try replay.daemon.connect()
        let status = try #require(try client.request("status")["result"] as? [String: Any])
        let epochs = try #require((status["counters"] as? [String: Any])?["fixesReceived"] as? Int)
        let ndjson = try Self.cli(replay.daemon, ["--format", "ndjson"]).stdout()
        let points = try ndjson.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let times = points.compactMap { $0["timestamp"] as? String }
        #expect(times.count == points.count, "every point has the receiver's time")
        #expect(times.allSatisfy { $0.hasPrefix("2018-08-20T") }, "\(times.prefix(3))")
        #expect(epochs - points.count == 3, "aklocd delivered \(epochs) epochs, recorded \(points.count)")
        #expect(Set(points.compactMap { $0["segment"] as? Int }).count == 1)

        let stats = try Self.cli(replay.daemon, ["stats"]).stdout()
        #expect(stats.hasSuffix("\n"), "\(stats.debugDescription)")
        let rows = stats.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(rows.count == 4 && rows.last == "", "header, segment, total, then the final newline: \(rows)")
        let total = try #require(rows.first { $0.hasPrefix("total") })
        #expect(!stats.contains("?"), "\(stats)")
        // The duration is the receiver's first to last time: 09:47:37 to 09:50:04 (gpsd 3.22).
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let first = try #require(times.first.flatMap { formatter.date(from: $0) })
        let last = try #require(times.last.flatMap { formatter.date(from: $0) })
        let seconds = Int(last.timeIntervalSince(first))
        #expect(seconds > 100)
        #expect(total.contains("\(seconds / 60) min \(seconds % 60) s"), "\(total)")
    }

    /// `akloc track clear` as an admin runs it: `--before` a point's time
    /// keeps that point and every later one, then without `--before` nothing
    /// is left; options of the export are refused (64), a date that does not
    /// exist too (1, the daemon's words), and the track is untouched by both.
    @Test func trackClearDeletesBeforeATimeThenEverything() throws {
        guard LiveReplay.requireTools() else { return }
        let replay = try LiveReplay(log: "haicom-305N", cycle: nil, config: Self.everyEpoch)
        defer { replay.stop() }
        _ = replay.fake.waitForExit(timeout: 60)
        try MQTTTest.waitForReplayEnd(replay.daemon)
        func received() throws -> [String] {
            let ndjson = try Self.cli(replay.daemon, ["--format", "ndjson"]).stdout()
            return try ndjson.split(separator: "\n").map {
                let point = try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
                return try #require(point["receivedAt"] as? String, "\(point)")
            }
        }
        func clear(_ arguments: [String]) throws -> TestProcess {
            let process = try TestProcess(
                Binaries.akloc, ["--socket", replay.daemon.socketPath, "track", "clear"] + arguments)
            process.waitForExit(timeout: 30)
            return process
        }
        let all = try received()
        #expect(all.count > 50)

        for (arguments, status, words) in [
            (["--since", "1h"], 64, "--since"), (["--format", "csv"], 64, "--format"),
            (["--before", "yesterday"], 64, "--before"), (["--before", "2026-13-01"], 1, "\"before\""),
        ] as [([String], Int32, String)] {
            let refused = try clear(arguments)
            #expect(refused.exitCode == status, "\(arguments): \(refused.stderr())")
            #expect(refused.stderr().contains(words), "\(arguments): \(refused.stderr())")
        }
        #expect(try received() == all, "a refused clear deletes nothing")

        // A point later (to the millisecond) than the one before it: every
        // earlier point was received before it, it and the later ones not.
        let middle = try #require((all.count / 2..<all.count).first { all[$0] > all[$0 - 1] })
        let cut = try clear(["--before", all[middle]])
        #expect(cut.exitCode == 0, "\(cut.stderr())")
        #expect(cut.stdout() == "cleared the track before \(all[middle])\n")
        #expect(try received() == Array(all[middle...]))

        let everything = try clear([])
        #expect(everything.exitCode == 0, "\(everything.stderr())")
        #expect(everything.stdout() == "cleared the track\n")
        #expect(try received().isEmpty)
    }

    @Test func sigkillAtRandomMomentsNeverLosesASyncedPointNorReturnsACorruptOne() throws {
        guard LiveReplay.requireTools() else { return }
        let syncInterval = 0.5
        let fake = try GPSFake.start(log: LiveReplay.bundled("haicom-305N"), cycle: 0.02, loop: true)
        defer { fake.stop() }
        let daemon = try DaemonProcess(
            gpsdPort: fake.port,
            config: Self.everyEpoch + "\nsync-interval = \(syncInterval)\n")
        defer { daemon.stop() }
        func track() throws -> [[String: Any]] {
            let (client, _) = try daemon.connect()
            var all: [[String: Any]] = []
            var after: Any = NSNull()
            repeat {
                let reply = try client.request("track", ["limit": 100_000, "after": after])
                let result = try #require(reply["result"] as? [String: Any], "\(reply)")
                all += try #require(result["points"] as? [[String: Any]])
                after = result["next"] ?? NSNull()
            } while !(after is NSNull)
            return all
        }
        var generator = SystemRandomNumberGenerator()
        var kills = 0
        var previous: [[String: Any]] = []
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        while kills < 50 {
            try daemon.waitUntilSourceConnected()
            usleep(UInt32.random(in: 100_000...600_000, using: &generator))
            let seen = try track()
            usleep(UInt32.random(in: 0...300_000, using: &generator))
            let killedAt = Date()
            try daemon.restart()  // SIGKILL, then the same daemon on the same state
            kills += 1
            let after = try track()
            // Nothing comes back that was not a whole point (the decoder
            // would have dropped it), and nothing synced is lost.
            for point in after {
                #expect(point["latitude"] is Double && point["longitude"] is Double && point["segment"] is Int)
            }
            let keys = Set(after.map { "\($0["receivedAt"] ?? "")|\($0["latitude"] ?? "")|\($0["segment"] ?? "")" })
            for point in seen {
                guard let text = point["receivedAt"] as? String, let received = formatter.date(from: text) else {
                    Issue.record("a point without receivedAt: \(point)")
                    continue
                }
                // Synced by receivedAt + sync-interval (+ the timer's leeway).
                guard killedAt.timeIntervalSince(received) > syncInterval + 0.1 else { continue }
                let key = "\(point["receivedAt"] ?? "")|\(point["latitude"] ?? "")|\(point["segment"] ?? "")"
                #expect(keys.contains(key), "kill \(kills): lost \(point)")
            }
            #expect(after.count >= previous.count)
            // A restart starts a new segment.
            let segments = after.compactMap { $0["segment"] as? Int }
            #expect(segments == segments.sorted())
            previous = after
        }
        #expect(previous.count > 100)
        #expect(Set(previous.compactMap { $0["segment"] as? Int }).count >= 25)
    }
}
