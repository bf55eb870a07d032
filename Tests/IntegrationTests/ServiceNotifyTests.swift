import AklocTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension ServiceTests {
    /// What aklocd tells systemd (sd_notify), read from a test-owned
    /// `NOTIFY_SOCKET`, and how it stops.
    @Suite(.enabled(if: ServiceTools.shouldRun, "skipped: \(ServiceTools.missingMessage)"))
    struct NotifyTests {
        @Test func readyStatusInWordsAndWatchdog() throws {
            guard ServiceTools.require() else { return }
            let fake = try GPSFake.start(log: ServiceTools.log("mt3339"), cycle: 0.1)
            defer { fake.stop() }
            let notify = try NotifySocket()
            let spawned = ContinuousClock.now
            let daemon = try DaemonProcess(
                gpsdPort: fake.port, environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "400000"],
                waitForSocket: false)
            defer { daemon.stop() }
            let ready = try notify.waitFor("READY", "1", timeout: 15)
            print("exec to READY=1: \(milliseconds(ready.receivedAt - spawned))")

            let (client, _) = try daemon.connect()
            #expect(try client.request("startUpdatingLocation")["ok"] as? Bool == true)
            _ = try client.waitForEvent("didGetFirstLocation")
            let status = try notify.waitFor(timeout: 10) { $0["STATUS"] == "3D fix, 1 client" }
            print("STATUS= seen: \(notify.received.compactMap { $0["STATUS"] })")
            #expect(status["STATUS"] == "3D fix, 1 client")

            // WATCHDOG_USEC=400000: a ping every 200 ms, well inside the 400 ms systemd allows.
            // Queued ones were read late; time only those read as they arrive.
            notify.drain()
            #expect(notify.received.contains { $0["WATCHDOG"] == "1" }, "pinging since READY=1")
            var pings: [ContinuousClock.Instant] = []
            while pings.count < 4 {
                pings.append(try notify.waitFor("WATCHDOG", "1", timeout: 2).receivedAt)
            }
            let gaps = zip(pings.dropFirst(), pings).map { $0 - $1 }
            print("WATCHDOG=1 gaps: \(gaps.map(milliseconds))")
            #expect(gaps.allSatisfy { $0 < .milliseconds(400) }, "\(gaps)")
        }

        @Test func noWatchdogWithoutWatchdogUsec() throws {
            let notify = try NotifySocket()
            let daemon = try DaemonProcess(
                gpsdPort: FreePort.loopbackTCP(), environment: ["NOTIFY_SOCKET": notify.path], waitForSocket: false)
            defer { daemon.stop() }
            try notify.waitFor("READY", "1", timeout: 15)
            // Bounded by the SIGTERM round trip, not by a sleep: everything sent before
            // STOPPING=1 is in the socket by then.
            #expect(daemon.terminate() == 0)
            try notify.waitFor("STOPPING", "1", timeout: 5)
            #expect(!notify.received.contains { $0["WATCHDOG"] != nil }, "\(notify.received)")
        }

        /// systemd may stop a service the moment it says READY=1: that SIGTERM
        /// must be handled (STOPPING=1, exit 0), never lost or fatal.
        @Test func sigtermRightAfterReadyIsHandled() throws {
            for round in 1...10 {
                let notify = try NotifySocket()
                let daemon = try DaemonProcess(
                    gpsdPort: FreePort.loopbackTCP(), environment: ["NOTIFY_SOCKET": notify.path],
                    waitForSocket: false)
                defer { daemon.stop() }
                try notify.waitFor("READY", "1", timeout: 15)
                daemon.process.signal(SIGTERM)
                #expect(daemon.process.waitForExit(timeout: 2) == 0, "round \(round)")
                #expect(notify.drain().contains { $0["STOPPING"] == "1" }, "round \(round): \(notify.received)")
            }
        }

        @Test func sighupSaysReloadingWithTimestampThenReady() throws {
            let notify = try NotifySocket()
            let daemon = try DaemonProcess(
                gpsdPort: FreePort.loopbackTCP(), environment: ["NOTIFY_SOCKET": notify.path], waitForSocket: false)
            defer { daemon.stop() }
            try notify.waitFor("READY", "1", timeout: 15)
            let (client, _) = try daemon.connect()

            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let before = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
            let sent = ContinuousClock.now
            daemon.process.signal(SIGHUP)
            let reloading = try notify.waitFor("RELOADING", "1", timeout: 5)
            let stamp = try #require(reloading["MONOTONIC_USEC"].flatMap(UInt64.init), "\(reloading)")
            #expect(stamp >= before && stamp - before < 5_000_000, "CLOCK_MONOTONIC in µs: \(stamp) vs \(before)")
            let readyAgain = try notify.waitFor("READY", "1", timeout: 5)
            print("SIGHUP to READY=1: \(milliseconds(readyAgain.receivedAt - sent))")
            // The client was not dropped.
            #expect(try client.request("status")["ok"] as? Bool == true)
            #expect(daemon.process.stderr().contains("configuration reloaded from \(daemon.configPath)"))
        }

        @Test func sigtermStopsWithinTwoSecondsTellingClientsAndFlushingState() throws {
            guard ServiceTools.require() else { return }
            let fake = try GPSFake.start(log: ServiceTools.log("mt3339"), cycle: 0.1)
            defer { fake.stop() }
            let notify = try NotifySocket()
            let daemon = try DaemonProcess(
                gpsdPort: fake.port, environment: ["NOTIFY_SOCKET": notify.path], waitForSocket: false)
            defer { daemon.stop() }
            try notify.waitFor("READY", "1", timeout: 15)
            let (updating, _) = try daemon.connect()
            let (idle, _) = try daemon.connect()
            #expect(try updating.request("startUpdatingLocation")["ok"] as? Bool == true)
            let first = try updating.waitForEvent("didGetFirstLocation")
            let latitude = try #require((first["location"] as? [String: Any])?["latitude"] as? Double)

            let sent = ContinuousClock.now
            daemon.process.signal(SIGTERM)
            let stopping = try notify.waitFor("STOPPING", "1", timeout: 2)
            let code = daemon.process.waitForExit(timeout: 2)
            let exited = ContinuousClock.now
            print(
                "SIGTERM to STOPPING=1: \(milliseconds(stopping.receivedAt - sent)), "
                    + "to exit: \(milliseconds(exited - sent)) (includes a 5 ms wait poll)")
            #expect(code == 0, "\(daemon.process.stderr())")
            #expect(exited - sent < .seconds(2))

            for client in [updating, idle] {
                let messages = try client.readUntilClosed()
                let last = try #require(messages.last, "nothing before the close")
                #expect(last["event"] as? String == "didGetNotification")
                #expect(last["notification"] as? String == "daemonStopping")
            }
            // State flushed at stop: the last location is in the file.
            let state = try String(contentsOfFile: daemon.stateDirectory + "/state.json", encoding: .utf8)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(state.utf8)) as? [String: Any])
            #expect(object["paused"] as? Bool == false)
            let saved = try #require(object["lastLocation"] as? [String: Any])
            #expect(abs((saved["latitude"] as? Double ?? 0) - latitude) < 0.001)
            #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "its own socket is removed")
        }

        @Test func sigintStopsLikeSigterm() throws {
            let notify = try NotifySocket()
            let daemon = try DaemonProcess(
                gpsdPort: FreePort.loopbackTCP(), environment: ["NOTIFY_SOCKET": notify.path], waitForSocket: false)
            defer { daemon.stop() }
            try notify.waitFor("READY", "1", timeout: 15)
            let (client, _) = try daemon.connect()
            daemon.process.signal(SIGINT)
            try notify.waitFor("STOPPING", "1", timeout: 2)
            #expect(daemon.process.waitForExit(timeout: 2) == 0)
            #expect(try client.readUntilClosed().last?["notification"] as? String == "daemonStopping")
        }
    }
}
