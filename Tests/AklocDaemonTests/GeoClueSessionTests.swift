import AklocGeoClue
import AklocSystemd
import AklocTestSupport
import Foundation
import Testing

@testable import AklocDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// What the D-Bus side needs and this machine lacks.
private let dbusMissing = PrivateSystemBus.missing + GeoCluePythonClient.missing

/// Issue 15: a D-Bus caller whose rule is `when-in-use` gets fixes only
/// while its user is logged in. The daemon runs in this process so a
/// `FakeSessionMonitor` can play logind; it owns the GeoClue2 name on a
/// private system bus, reads a real gpsd replay, and serves a dbus-python
/// client running as a real test user.
@Suite(
    .serialized,
    .enabled(
        if: (GPSDTools.available && SystemAccounts.available && dbusMissing.isEmpty)
            || GPSDTools.required,
        "skipped: needs root, setpriv, \(dbusMissing) and \(GPSDTools.missingMessage)"))
struct GeoClueSessionTests {
    /// Polls `condition` every 50 ms until it holds or `timeout` passes.
    private func eventually(timeout: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(50_000)
        }
        return condition()
    }

    @Test func whenInUseDBusClientsGetFixesOnlyWhileLoggedIn() throws {
        guard GPSDTools.available, SystemAccounts.available, dbusMissing.isEmpty else {
            Issue.record("AKLOC_REQUIRE_TOOLS=1 and missing: \(dbusMissing), \(GPSDTools.missingMessage) or not root")
            return
        }
        let accounts = SystemAccounts()
        defer { accounts.removeAll() }
        let user = try accounts.addUser()
        let bus = try PrivateSystemBus()
        defer { bus.stop() }
        // sd-bus in this process finds the private bus as its system bus.
        setenv("DBUS_SYSTEM_BUS_ADDRESS", bus.address, 1)
        defer { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }
        let fake = try GPSFake.start(
            log: GPSFake.bundledLog("humminbird-M37"), cycle: 0.1, loop: true)
        defer { fake.stop() }

        // `default = deny`: only the user's own rule lets its D-Bus client in.
        // No track: this daemon has no state directory to keep one in.
        let configuration = try ConfigParser.parse(
            "[geoclue]\nenable = yes\n[track]\nenable = no\n[authorization]\ndefault = deny\n"
                + "\(user.name) = when-in-use\n", path: "test")
        let sessions = FakeSessionMonitor()
        let daemon = try InProcessDaemon(gpsdPort: fake.port, configuration: configuration, sessions: sessions)
        defer { daemon.stop() }
        let front = daemon.daemon.queue.sync {
            daemon.daemon.assumeIsolated { $0.features.feature(GeoClueFeature.self)?.ownsName ?? false }
        }
        try #require(front, "aklocd does not own org.freedesktop.GeoClue2 on the private bus")

        // Root (always authorized) sees every epoch: the clock the D-Bus client is checked against.
        let root = try SocketClient.connect(path: daemon.socketPath)
        _ = try root.readMessage()
        #expect(try root.request("observe", ["keyPath": "rawLocation"]).ok)

        let client = try TestProcess(
            TestProcess.which("setpriv") ?? "/usr/bin/setpriv",
            ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "--"]
                + GeoCluePythonClient.command(seconds: 120),
            environment: bus.environment)
        defer { client.kill() }
        func updates() -> Int { GeoCluePythonClient.lines(client).filter { $0["lat"] != nil }.count }

        // Logged in: LocationUpdated, a new Location each epoch.
        #expect(
            eventually(timeout: 20) { updates() >= 3 },
            "while active: \(client.stdout()) \(client.stderr())")
        #expect(!GeoCluePythonClient.lines(client).contains { $0["error"] != nil }, "\(client.stdout())")
        #expect(sessions.watchedUIDs.contains(user.uid), "the D-Bus client's uid is not watched")

        // Logged out. The change reaches the daemon's queue before this sync
        // returns; a fix the client was sent before it may still be in
        // flight, so the count is taken two epochs later.
        sessions.set(uid: user.uid, active: false)
        daemon.daemon.queue.sync {}
        try root.waitForLocations(2)
        let frozen = updates()
        try root.waitForLocations(15)
        #expect(updates() == frozen, "updates while logged out: \(client.stdout())")
        #expect(client.isRunning, "\(client.stderr())")

        // Logged in again: updates resume.
        sessions.set(uid: user.uid, active: true)
        #expect(
            eventually(timeout: 20) { updates() >= frozen + 3 },
            "after re-activation: \(updates()) updates, \(frozen) before: \(client.stderr())")
        #expect(
            daemon.daemon.queue.sync {
                daemon.daemon.assumeIsolated { $0.features.feature(GeoClueFeature.self)?.startedClients }
            } == 1)
    }
}
