import AklocTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension ServiceTests {
    /// Socket activation as systemd does it, through `systemd-socket-activate`:
    /// it binds the socket, waits for the first connection, then execs aklocd
    /// in place with `LISTEN_FDS=1`.
    @Suite(.enabled(if: ServiceTools.shouldRun, "skipped: \(ServiceTools.missingMessage)"))
    struct ActivationTests {
        @Test func activatedSocketServesHelloRequestsAndFixes() throws {
            guard ServiceTools.require() else { return }
            let fake = try GPSFake.start(log: ServiceTools.log("mt3339"), cycle: 0.1)
            defer { fake.stop() }
            let scratch = try ScratchDirectory()
            try "".write(toFile: scratch.path("akloc.conf"), atomically: true, encoding: .utf8)
            let notify = try NotifySocket()
            let socketPath = scratch.path("activated.sock")
            // No --socket: the only socket aklocd may serve is the one passed in.
            let activator = try TestProcess(
                "systemd-socket-activate",
                [
                    "-l", socketPath, "-E", "NOTIFY_SOCKET=\(notify.path)",
                    Binaries.aklocd, "--gpsd", "127.0.0.1:\(fake.port)", "--state-dir", scratch.path("state"),
                    "--config", scratch.path("akloc.conf"), "--log-level", "debug",
                ], removing: DaemonProcess.systemdVariables)
            defer { activator.kill() }

            // The first connection is what starts aklocd.
            let client = try SocketClient.connect(path: socketPath, timeout: 15)
            let hello = try client.readMessage(timeout: 15)
            #expect(hello["event"] as? String == "hello")
            #expect(hello["protocol"] as? Int == 1)
            #expect(hello["authorizationStatus"] as? String == "authorizedAlways", "the test runs as root")
            try notify.waitFor("READY", "1")
            #expect(TestProcess.procStat(activator.pid)?.command == "aklocd", "exec'd in place, same pid")

            let status = try client.request("status")
            #expect(status["ok"] as? Bool == true, "\(status)")
            #expect((result(status)?["clients"] as? [String: Any])?["connected"] as? Int == 1)

            let started = try client.request("startUpdatingLocation")
            #expect(started["ok"] as? Bool == true, "\(started)")
            let first = try client.waitForEvent("didGetFirstLocation")
            let location = try #require(first["location"] as? [String: Any])
            // mt3339.log: Bend, Oregon, 44.04 N 121.18 W (4404.1305 N, 12118.8515 W).
            #expect(abs((location["latitude"] as? Double ?? 0) - 44.06884) < 0.001)
            #expect(abs((location["longitude"] as? Double ?? 0) + 121.31419) < 0.001)
            #expect(location["mode"] as? String == "3d")

            let log = activator.stderr()
            #expect(log.contains("serving the socket systemd passed"), "\(log)")

            activator.signal(SIGTERM)
            #expect(activator.waitForExit(timeout: 5) == 0, "\(activator.stderr())")
            #expect(FileManager.default.fileExists(atPath: socketPath), "the activated socket is systemd's to remove")
        }

        @Test func twoActivatedSocketsAreRefused() throws {
            guard ServiceTools.require() else { return }
            let scratch = try ScratchDirectory()
            try "".write(toFile: scratch.path("akloc.conf"), atomically: true, encoding: .utf8)
            let activator = try TestProcess(
                "systemd-socket-activate",
                [
                    "-l", scratch.path("one.sock"), "-l", scratch.path("two.sock"),
                    Binaries.aklocd, "--gpsd", "127.0.0.1:\(FreePort.loopbackTCP())",
                    "--state-dir", scratch.path("state"), "--config", scratch.path("akloc.conf"),
                ], removing: DaemonProcess.systemdVariables)
            defer { activator.kill() }
            let client = try SocketClient.connect(path: scratch.path("one.sock"), timeout: 15)
            #expect(try client.readLine(timeout: 15) == nil, "no hello: aklocd refuses to start")
            #expect(activator.waitForExit(timeout: 10) == 71)
            #expect(activator.stderr().contains("tooManyDescriptors"), "\(activator.stderr())")
        }
    }
}
