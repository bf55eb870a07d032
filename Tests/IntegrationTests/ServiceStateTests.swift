import AklocTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension ServiceTests {
    /// What survives a crash: the paused flag and the last location, and a
    /// state file that cannot be read is moved aside, never fatal.
    @Suite(.enabled(if: ServiceTools.shouldRun, "skipped: \(ServiceTools.missingMessage)"))
    struct StateTests {
        /// Wall-clock seconds since an ISO 8601 UTC time as aklocd writes it.
        static func secondsSince(_ text: String) -> Double? {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter.date(from: text).map { Date().timeIntervalSince($0) }
        }

        @Test func sigkillWhilePausedComesBackPausedWithTheLastLocationAndItsAge() throws {
            guard ServiceTools.require() else { return }
            let fake = try GPSFake.start(log: ServiceTools.log("mt3339"), cycle: 0.1)
            defer { fake.stop() }
            let daemon = try DaemonProcess(gpsdPort: fake.port)
            defer { daemon.stop() }
            let (client, _) = try daemon.connect()
            #expect(try client.request("startUpdatingLocation")["ok"] as? Bool == true)
            let first = try client.waitForEvent("didGetFirstLocation")
            let location = try #require(first["location"] as? [String: Any])
            // Root may pause; the reply comes once the paused flag is on disk.
            let paused = try client.request("pause")
            #expect(paused["ok"] as? Bool == true, "\(paused)")
            let pid = daemon.process.pid

            try daemon.restart()  // SIGKILL, then the same daemon again
            #expect(daemon.process.pid != pid)
            let (after, hello) = try daemon.connect()
            #expect(hello["event"] as? String == "hello")
            #expect(try after.request("get", ["keyPath": "state"])["result"] as? String == "paused")

            let status = try #require(result(try after.request("status")))
            #expect(status["state"] as? String == "paused")
            #expect(status["paused"] as? Bool == true)
            let fix = try #require(status["fix"] as? [String: Any], "\(status)")
            let age = try #require(fix["ageSeconds"] as? Double)

            let got = try after.request("get", ["keyPath": "myLocation"])
            let restored = try #require(got["result"] as? [String: Any], "\(got)")
            #expect(restored["latitude"] as? Double == location["latitude"] as? Double)
            #expect(restored["longitude"] as? Double == location["longitude"] as? Double)
            #expect(restored["timestamp"] as? String == location["timestamp"] as? String)
            // Its age: `receivedAt` is when the old process got it, and status
            // counts from there on the wall clock.
            let receivedAt = try #require(restored["receivedAt"] as? String)
            #expect(receivedAt == location["receivedAt"] as? String)
            let wallAge = try #require(Self.secondsSince(receivedAt))
            #expect(age > 0 && abs(age - wallAge) < 1, "status age \(age) s, receivedAt \(wallAge) s ago")
            print("restored fix: receivedAt \(receivedAt), status.fix.ageSeconds \(age)")

            // Restored, so never fresh: no requestLocation from it while paused.
            let request = try after.request("requestLocation", ["timeout": 1])
            #expect((request["error"] as? [String: Any])?["code"] as? String == "unavailable")
            #expect(try after.request("resume")["ok"] as? Bool == true)
            let state = try String(contentsOfFile: daemon.stateDirectory + "/state.json", encoding: .utf8)
            #expect(state.contains("\"paused\" : false"), "resume is on disk too")
        }

        @Test func theFirstFixIsSavedWithoutWaitingForAStop() throws {
            guard ServiceTools.require() else { return }
            let fake = try GPSFake.start(log: ServiceTools.log("mt3339"), cycle: 0.1)
            defer { fake.stop() }
            let daemon = try DaemonProcess(gpsdPort: fake.port)
            defer { daemon.stop() }
            let (client, _) = try daemon.connect()
            #expect(try client.request("startUpdatingLocation")["ok"] as? Bool == true)
            let first = try client.waitForEvent("didGetFirstLocation")
            let receivedAt = try #require((first["location"] as? [String: Any])?["receivedAt"] as? String)
            let statePath = daemon.stateDirectory + "/state.json"
            let saved = waitForFile(statePath, timeout: 5) { $0.contains("\"lastLocation\"") }
            #expect(saved != nil, "no last location in \(statePath) 5 s after the first fix")

            try daemon.restart()  // SIGKILL: nothing is flushed at exit
            let (after, _) = try daemon.connect()
            let got = try after.request("get", ["keyPath": "myLocation"])
            let restored = try #require(got["result"] as? [String: Any], "\(got)")
            let restoredAt = try #require(restored["receivedAt"] as? String)
            #expect(restoredAt >= receivedAt, "the first fix or a later one")
            #expect(try after.request("get", ["keyPath": "state"])["result"] as? String != "paused")
        }

        static let validState = """
            {
              "authorizationDecisions" : { "1000" : "authorizedWhenInUse" },
              "lastLocation" : { "latitude" : 52.52, "longitude" : 13.405, "mode" : "3d" },
              "paused" : true,
              "version" : 1
            }

            """

        @Test(arguments: [
            ("truncated", Array(validState.utf8.prefix(70))),
            ("garbage", Array("\u{0}\u{1}not json at all \u{FF}".utf8) + [0xFF, 0xFE]),
            ("empty", []),
        ])
        func aBadStateFileIsMovedAsideAndTheDaemonStartsClean(name: String, bytes: [UInt8]) throws {
            let port = FreePort.loopbackTCP()
            let scratch = try ScratchDirectory()
            let stateDirectory = scratch.path("state")
            try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
            let statePath = stateDirectory + "/state.json"
            try Data(bytes).write(to: URL(fileURLWithPath: statePath))

            let daemon = try DaemonProcess(gpsdPort: port, extraArguments: ["--state-dir", stateDirectory])
            defer { daemon.stop() }
            let (client, hello) = try daemon.connect()
            #expect(hello["event"] as? String == "hello")
            let status = try #require(result(try client.request("status")))
            #expect(status["paused"] as? Bool == false, "clean state, not the paused one")
            #expect(status["fix"] == nil)

            let aside = try FileManager.default.contentsOfDirectory(atPath: stateDirectory)
                .filter { $0.hasPrefix("state.json.corrupt-") }
            #expect(aside.count == 1, "\(aside)")
            let asidePath = stateDirectory + "/" + (aside.first ?? "")
            #expect(FileManager.default.contents(atPath: asidePath).map(Array.init) == bytes, "kept as it was")
            let log = daemon.process.stderr()
            let warning = log.split(separator: "\n").first { $0.hasPrefix("warning:") && $0.contains(asidePath) }
            #expect(warning != nil, "no warning naming \(asidePath) in:\n\(log)")
            print("\(name): \(warning ?? "")")
        }
    }
}
