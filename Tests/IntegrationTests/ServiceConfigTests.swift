import AklocTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension ServiceTests {
    /// `aklocd --check-config`, and reloads (SIGHUP and the `reload` op)
    /// as docs/configuration.md promises them: a bad file changes nothing, a
    /// good one changes behaviour, and no client is dropped either way.
    @Suite(.enabled(if: ServiceTools.shouldRun, "skipped: \(ServiceTools.missingMessage)"))
    struct ConfigTests {
        static let everyKey = """
            # every key, none at its default
            [gpsd]
            host = localhost
            port = 2948
            device = /dev/ttyUSB0

            [throttle]
            update-speed = 1.5
            min-interval = 2
            max-interval = 60
            distance-filter = 10
            desired-accuracy = 50
            first-location-attempts = 3
            max-fix-age = 1.5

            [authorization]
            default = deny
            admin-group = wheel
            alice = always
            @staff = when-in-use
            bob = deny

            [socket]
            path = "/run/akloc/other.sock"
            mode = 0660
            client-hard-limit = 4M

            """

        func checkConfig(_ text: String) throws -> (code: Int32?, stdout: String, stderr: String, path: String) {
            let scratch = try ScratchDirectory()
            let path = scratch.path("akloc.conf")
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let process = try TestProcess(Binaries.aklocd, ["--check-config", "--config", path])
            let code = process.waitForExit(timeout: 10)
            return (code, process.stdout(), process.stderr(), path)
        }

        @Test func checkConfigAcceptsEveryKeyAndTheShippedFile() throws {
            let every = try checkConfig(Self.everyKey)
            #expect(every.code == 0, "\(every.stderr)")
            #expect(every.stdout == "\(every.path): valid\n")
            let shipped = Binaries.packageRoot.appendingPathComponent("config/akloc.conf").path
            let process = try TestProcess(Binaries.aklocd, ["--check-config", "--config", shipped])
            #expect(process.waitForExit(timeout: 10) == 0, "\(process.stderr())")
            #expect(process.stdout() == "\(shipped): valid\n")
        }

        @Test(arguments: [
            ("[gpsd]\nport = 0\n", 2, "[gpsd] port: expected a port number 1-65535, got \"0\""),
            ("[throttle]\nmin-interval = 10\nmax-interval = 5\n", 3, "[throttle] max-interval"),
            ("[throttle]\nmax-fix-age = 100000\n", 2, "[throttle] max-fix-age"),
            ("[throttle]\nmax-interval = soon\n", 2, "expected a number of seconds"),
            ("[gpsd]\nhots = localhost\n", 2, "[gpsd] hots: expected one of host, port, device"),
            ("[authorization]\nalice = always\nalice = deny\n", 3, "already set on line 2"),
            ("[socket]\nmode = 0888\n", 2, "[socket] mode"),
            ("[gpsd]\nport 2947\n", 2, "expected \"key = value\""),
            ("[gpsd\n", 1, "expected a section header"),
            ("[mqtt]\nenable = yes\nhost = \n", 3, "[mqtt] host: expected one or more host[:port]"),
            ("[mqtt]\nhost = n1:1883, n2:70000\n", 2, "[mqtt] host: expected one or more host[:port]"),
            ("[mqtt]\nenable = yes\ndrain-rate = 0\n", 3, "[mqtt] drain-rate: expected a number of fixes per second"),
            ("[mqtt]\ndrain-rate = fast\n", 2, "[mqtt] drain-rate: expected a number of fixes per second"),
            ("[mqtt]\nenable = yes\nprotocol = 4\n", 3, "[mqtt] protocol: expected auto, 5 or 3.1.1"),
            ("[mqtt]\nexpire = 7 days\n", 2, "[mqtt] expire: expected a duration > 0"),
        ])
        func checkConfigRefusesABadFileNamingFileAndLine(text: String, line: Int, message: String) throws {
            let result = try checkConfig(text)
            #expect(result.code == 78, "\(text)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.hasPrefix("aklocd: \(result.path):\(line): "), "\(result.stderr)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }

        @Test func checkConfigRefusesAMissingNamedFile() throws {
            let process = try TestProcess(Binaries.aklocd, ["--check-config", "--config", "/nonexistent/akloc.conf"])
            #expect(process.waitForExit(timeout: 10) == 78)
            #expect(process.stderr().contains("/nonexistent/akloc.conf"), "\(process.stderr())")
        }

        /// The intervals of the throttled deliveries a new subscriber gets
        /// after its first location, `count` of them.
        static func throttledIntervals(_ client: SocketClient, count: Int) throws -> [Double] {
            #expect(try client.request("startUpdatingLocation")["ok"] as? Bool == true)
            var intervals: [Double] = []
            while intervals.count < count {
                let update = try client.waitForEvent("didUpdateLocation", timeout: 15)
                if let interval = update["afterTimeInterval"] as? Double { intervals.append(interval) }
            }
            return intervals
        }

        /// SIGHUP, then the RELOADING=1 … READY=1 pair that brackets it.
        static func reload(_ daemon: DaemonProcess, _ notify: NotifySocket) throws {
            notify.drain()
            daemon.process.signal(SIGHUP)
            try notify.waitFor("RELOADING", "1", timeout: 5)
            try notify.waitFor("READY", "1", timeout: 5)
        }

        @Test func reloadKeepsTheOldConfigOnABadFileAndAppliesAGoodOneToNewStarts() throws {
            guard ServiceTools.require() else { return }
            // mt3339 replayed at 0.2 s a sentence: an epoch about every 0.9 s for ~28 s.
            let fake = try GPSFake.start(log: ServiceTools.log("mt3339"), cycle: 0.2)
            defer { fake.stop() }
            let notify = try NotifySocket()
            let daemon = try DaemonProcess(
                gpsdPort: fake.port, config: "[throttle]\nmin-interval = 1\nmax-interval = 1\n",
                environment: ["NOTIFY_SOCKET": notify.path], waitForSocket: false)
            defer { daemon.stop() }
            try notify.waitFor("READY", "1", timeout: 15)

            let (first, _) = try daemon.connect()
            let firstIntervals = try Self.throttledIntervals(first, count: 1)
            #expect(firstIntervals.allSatisfy { $0 >= 1 && $0 < 3 }, "\(firstIntervals)")

            // A bad file: refused with file:line, in the log and in the reply of the reload op.
            try "[throttle]\nmin-interval = 3\nmax-interval = soon\n".write(
                toFile: daemon.configPath, atomically: true, encoding: .utf8)
            try Self.reload(daemon, notify)
            let log = daemon.process.stderr()
            #expect(
                log.contains("error: reload refused, keeping the running config: \(daemon.configPath):3: "),
                "\(log)")
            let refused = try first.request("reload")
            #expect(refused["ok"] as? Bool == false)
            let message = (refused["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains("\(daemon.configPath):3:"), "\(refused)")
            let (second, _) = try daemon.connect()
            let secondIntervals = try Self.throttledIntervals(second, count: 1)
            #expect(secondIntervals.allSatisfy { $0 >= 1 && $0 < 3 }, "old defaults: \(secondIntervals)")

            // A good file: new starts get the new defaults; running subscriptions keep theirs.
            try "[throttle]\nmin-interval = 3\nmax-interval = 3\n".write(
                toFile: daemon.configPath, atomically: true, encoding: .utf8)
            try Self.reload(daemon, notify)
            #expect(daemon.process.stderr().contains("configuration reloaded from \(daemon.configPath)"))
            let (third, _) = try daemon.connect()
            let thirdIntervals = try Self.throttledIntervals(third, count: 1)
            #expect(thirdIntervals.allSatisfy { $0 >= 3 && $0 < 6 }, "new defaults: \(thirdIntervals)")

            // Nobody was dropped, and the first subscription still runs on its 1 s policy.
            var later: [Double] = []
            while later.count < 2 {
                let update = try first.waitForEvent("didUpdateLocation", timeout: 10)
                if let interval = update["afterTimeInterval"] as? Double { later.append(interval) }
            }
            #expect(later.last.map { $0 < 3 } == true, "\(later)")
            let status = try #require(result(try first.request("status")))
            #expect((status["clients"] as? [String: Any])?["connected"] as? Int == 3)
            print(
                "throttled intervals: before \(firstIntervals), after a bad reload \(secondIntervals), "
                    + "after a good one \(thirdIntervals) (first client still \(later))")
        }

        @Test func aNewSocketPathWaitsForARestartAndStopRemovesTheServedOne() throws {
            let scratch = try ScratchDirectory()
            let served = scratch.path("served.sock")
            let other = scratch.path("other.sock")
            let configPath = scratch.path("akloc.conf")
            try "[socket]\npath = \(served)\n".write(toFile: configPath, atomically: true, encoding: .utf8)
            let notify = try NotifySocket()
            // No --socket: [socket] path decides.
            let daemon = try TestProcess(
                Binaries.aklocd,
                [
                    "--gpsd", "127.0.0.1:\(FreePort.loopbackTCP())", "--state-dir", scratch.path("state"),
                    "--config", configPath,
                ], environment: ["NOTIFY_SOCKET": notify.path],
                removing: DaemonProcess.systemdVariables.filter { $0 != "NOTIFY_SOCKET" })
            defer { daemon.kill() }
            try notify.waitFor("READY", "1", timeout: 15)
            let client = try SocketClient.connect(path: served)
            #expect(try client.readMessage()["event"] as? String == "hello")

            try "[socket]\npath = \(other)\n".write(toFile: configPath, atomically: true, encoding: .utf8)
            daemon.signal(SIGHUP)
            try notify.waitFor("RELOADING", "1", timeout: 5)
            try notify.waitFor("READY", "1", timeout: 5)
            #expect(
                daemon.stderr().contains("[socket] path and mode apply at the next restart; still serving \(served)"))
            #expect(try client.request("status")["ok"] as? Bool == true)

            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit(timeout: 2) == 0)
            #expect(!FileManager.default.fileExists(atPath: served), "the socket it served is removed")
            #expect(!FileManager.default.fileExists(atPath: other))
        }

        @Test func reloadWithAnotherGpsdReconnectsWithoutDroppingClients() throws {
            guard ServiceTools.require() else { return }
            let fake = try GPSFake.start(log: ServiceTools.log("mt3339"), cycle: 0.1)
            defer { fake.stop() }
            let nowhere = FreePort.loopbackTCP()
            let notify = try NotifySocket()
            // No --gpsd: [gpsd] decides, and first points where nothing listens.
            let daemon = try DaemonProcess(
                gpsdPort: nil, config: "[gpsd]\nport = \(nowhere)\n", environment: ["NOTIFY_SOCKET": notify.path],
                waitForSocket: false)
            defer { daemon.stop() }
            try notify.waitFor("READY", "1", timeout: 15)
            let (client, _) = try daemon.connect()
            #expect(try client.request("startUpdatingLocation")["ok"] as? Bool == true)
            let before = try #require(result(try client.request("status")))
            #expect((before["source"] as? [String: Any])?["name"] as? String == "gpsd://127.0.0.1:\(nowhere)")

            try "[gpsd]\nport = \(fake.port)\n".write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
            try Self.reload(daemon, notify)
            _ = try client.waitFor(timeout: 15) { $0["notification"] as? String == "sourceConnected" }
            let first = try client.waitForEvent("didGetFirstLocation")
            #expect(first["location"] != nil)
            let after = try #require(result(try client.request("status")))
            let source = try #require(after["source"] as? [String: Any])
            #expect(source["name"] as? String == "gpsd://127.0.0.1:\(fake.port)")
            #expect(source["connected"] as? Bool == true)
            #expect(daemon.process.stderr().contains("gpsd source changed from gpsd://127.0.0.1:\(nowhere)"))
        }
    }
}
