import AklocCore
import AklocPosix
import AklocSystemd
import AklocTestSupport
import Foundation
import Testing

@testable import AklocDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The `Daemon` actor built in this process, as `DaemonMain` builds it, with
/// a session monitor of the test's choosing, on a private socket and reading
/// a real gpsd. `stop()` shuts it down without exiting.
final class InProcessDaemon {
    let daemon: Daemon
    let directory: URL
    let socketPath: String

    /// `withState`: a state directory of its own (the MQTT journal lives there), else none.
    init(gpsdPort: UInt16, configuration: Configuration, sessions: any SessionMonitor, withState: Bool = false) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-inprocess-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        chmod(directory.path, 0o755)  // clients run as other uids
        if withState {
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("state"), withIntermediateDirectories: true)
        }
        socketPath = directory.appendingPathComponent("akloc.sock").path
        var options = DaemonOptions()
        options.socketPath = socketPath
        options.gpsd = "127.0.0.1:\(gpsdPort)"
        let engine = try Engine(
            configuration: Daemon.engineConfiguration(configuration), restoring: PersistentState())
        daemon = Daemon(
            options: options, configuration: configuration, configPath: nil, engine: engine,
            stateStore: withState ? StateStore(directory: directory.appendingPathComponent("state").path) : nil,
            sessions: sessions, logger: Logger(minimumLevel: .warning))
        let daemon = daemon
        let failure: ComponentError? = daemon.queue.sync {
            daemon.assumeIsolated { daemon in
                do throws(ComponentError) {
                    try daemon.start(activatedFD: nil, handlingSignals: false)
                    return nil
                } catch {
                    return error
                }
            }
        }
        if let failure {
            try? FileManager.default.removeItem(at: directory)
            throw failure
        }
    }

    func stop() {
        let daemon = daemon
        daemon.queue.sync { daemon.assumeIsolated { $0.shutDown() } }
        try? FileManager.default.removeItem(at: directory)
    }

    /// A connection made by `uid` (see `PeerConnector`), past its hello.
    func connect(uid: UInt32) throws -> (SocketClient, hello: [String: Any]) {
        let client = try PeerConnector.connect(socketPath, uid: uid, gid: uid)[0]
        return (client, try client.readMessage())
    }
}

extension [String: Any] {
    fileprivate var notification: String? {
        self["event"] as? String == "didGetNotification" ? self["notification"] as? String : nil
    }
    var ok: Bool { self["ok"] as? Bool == true }
    var isLocation: Bool {
        switch self["event"] as? String {
        case "didUpdateLocation", "didGetFirstLocation": true
        case "change": (self["keyPath"] as? String)?.hasPrefix("rawLocation") == true
        default: false
        }
    }
}

extension SocketClient {
    func waitForLocations(_ count: Int, timeout: Double = 30) throws {
        var seen = 0
        _ = try waitFor(timeout: timeout) { message in
            if message.isLocation { seen += 1 }
            return seen >= count
        }
    }

    /// Sends a request and reads up to its reply; returns the events before it and the reply.
    fileprivate func exchange(
        _ op: String, _ arguments: [String: Any] = [:]
    ) throws -> (events: [[String: Any]], reply: [String: Any]) {
        var events: [[String: Any]] = []
        let reply = try request(op, arguments) { events.append($0) }
        return (events, reply)
    }

    fileprivate func positions(from line: Int) -> [String] {
        transcript[line...].filter { $0.contains("\"latitude\"") }
    }
}

/// DESIGN §2 Lifecycle through the daemon: a `FakeSessionMonitor` plays
/// logind behind the `SessionMonitor` protocol, gpsfake plays the receiver,
/// and clients connect as uids of their own (which needs root: `setpriv`).
@Suite(
    .serialized,
    .enabled(
        if: (GPSDTools.available && SystemAccounts.available) || GPSDTools.required,
        "skipped: needs root, setpriv and \(GPSDTools.missingMessage)"))
struct DaemonLifecycleTests {
    /// uids no account has: aklocd needs no passwd entry to serve a peer.
    static let whenInUseUID: UInt32 = 4_000_000_201
    static let alwaysUID: UInt32 = 4_000_000_202

    static func requireTools() -> Bool {
        guard GPSDTools.available, SystemAccounts.available, access(PeerConnector.python, X_OK) == 0 else {
            Issue.record("AKLOC_REQUIRE_TOOLS=1 and \(GPSDTools.missingMessage) or not root")
            return false
        }
        return true
    }

    static func capture(_ name: String) -> String {
        GPSFake.bundledLogDirectory.appendingPathComponent("\(name).log").path
    }

    /// A client of `uid` granted `type` through requestAuthorization, updating
    /// (default policy) and observing every epoch.
    static func subscriber(
        _ daemon: InProcessDaemon, uid: UInt32, type: String, expect status: String
    ) throws -> SocketClient {
        let (client, hello) = try daemon.connect(uid: uid)
        #expect(hello["authorizationStatus"] as? String == "notDetermined")
        let granted = try client.request("requestAuthorization", ["type": type])
        #expect((granted["result"] as? [String: Any])?["authorizationStatus"] as? String == status)
        #expect(try client.request("startUpdatingLocation").ok)
        #expect(try client.request("observe", ["keyPath": "rawLocation"]).ok)
        return client
    }

    @Test func whenInUseClientsFollowTheirLoginSession() throws {
        guard Self.requireTools() else { return }
        // About 17 s of fixes at 4 a second.
        let fake = try GPSFake.start(log: Self.capture("haicom-305N"), cycle: 0.05)
        defer { fake.stop() }
        let sessions = FakeSessionMonitor()
        var configuration = Configuration()
        configuration.authorization.defaultRule = .always
        let daemon = try InProcessDaemon(gpsdPort: fake.port, configuration: configuration, sessions: sessions)
        defer { daemon.stop() }
        // Root watches every epoch from the start, so aklocd watches gpsd before the replay begins.
        let root = try SocketClient.connect(path: daemon.socketPath)
        _ = try root.readMessage()
        #expect(try root.request("observe", ["keyPath": "rawLocation"]).ok)
        #expect(sessions.isStarted, "the daemon starts a monitor that tracks sessions")

        let inUse = try Self.subscriber(
            daemon, uid: Self.whenInUseUID, type: "whenInUse", expect: "authorizedWhenInUse")
        let always = try Self.subscriber(daemon, uid: Self.alwaysUID, type: "always", expect: "authorizedAlways")
        #expect(sessions.watchedUIDs.isSuperset(of: [Self.whenInUseUID, Self.alwaysUID]))
        try inUse.waitForLocations(3)
        try always.waitForLocations(3)

        // Both users' sessions go inactive.
        sessions.set(uid: Self.whenInUseUID, active: false)
        sessions.set(uid: Self.alwaysUID, active: false)
        _ = try inUse.waitFor { $0.notification == "appInBackground" }
        let backgrounded = inUse.transcript.count
        let inactiveSince = Date()
        _ = try always.waitFor { $0.notification == "appInBackground" }
        try always.waitForLocations(8)  // the always client keeps getting every epoch
        try root.waitForLocations(1)
        // The whenInUse client: no position at all meanwhile, in any event or reply.
        let status = try inUse.exchange("status")
        #expect(status.reply["ok"] as? Bool == true)
        #expect((status.reply["result"] as? [String: Any])?["fix"] == nil, "status shows a backgrounded client the fix")
        let got = try inUse.exchange("get", ["keyPath": "myLocation"])
        #expect(
            got.reply["result"] == nil || got.reply["result"] is NSNull, "get gave a backgrounded client \(got.reply)")
        #expect(
            inUse.positions(from: backgrounded).isEmpty,
            "positions while inactive: \(inUse.positions(from: backgrounded))")

        // Active again: a forced delivery on the started stream, then appActive.
        let inactiveFor = Date().timeIntervalSince(inactiveSince)
        sessions.set(uid: Self.whenInUseUID, active: true)
        sessions.set(uid: Self.alwaysUID, active: true)
        var back: [[String: Any]] = []
        _ = try inUse.waitFor(skipped: { back.append($0) }) { $0.notification == "appActive" }
        let forced = back.filter { $0["event"] as? String == "didUpdateLocation" }
        #expect(forced.count == 1, "one forced delivery before appActive: \(back)")
        if let interval = forced.first?["afterTimeInterval"] as? Double {
            #expect(interval >= inactiveFor, "afterTimeInterval \(interval) should span the \(inactiveFor) s inactive")
        } else {
            Issue.record("the forced delivery has no afterTimeInterval: \(forced)")
        }
        try inUse.waitForLocations(3)  // every epoch again
        var alwaysBack: [[String: Any]] = []
        _ = try always.waitFor(skipped: { alwaysBack.append($0) }) { $0.notification == "appActive" }
        #expect(
            !alwaysBack.contains { $0["event"] as? String == "didUpdateLocation" },
            "an always client gets no forced delivery")

        // The monitor watches a uid only while it has a client.
        inUse.shutdownWrite()
        let deadline = Date().addingTimeInterval(10)
        var connected = 3
        while connected > 2, Date() < deadline {
            let status = try root.request("status")
            let clients = (status["result"] as? [String: Any])?["clients"] as? [String: Any]
            connected = clients?["connected"] as? Int ?? 3
        }
        #expect(connected == 2, "aklocd did not notice the whenInUse client leave")
        #expect(!sessions.watchedUIDs.contains(Self.whenInUseUID), "a uid without clients is still watched")
        #expect(sessions.watchedUIDs.contains(Self.alwaysUID))
    }

    /// Without logind (no /run/systemd/users, as in this container) the
    /// sd-login monitor counts every uid as active: a whenInUse client gets fixes.
    @Test func withoutLogindWhenInUseClientsGetFixes() throws {
        guard Self.requireTools() else { return }
        let runtime = FileManager.default.temporaryDirectory.appendingPathComponent(
            "akloc-no-logind-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: runtime) }
        let sessions = LogindSessionMonitor(runtimeDirectory: runtime.path)
        #expect(!sessions.tracksSessions)

        let fake = try GPSFake.start(log: Self.capture("navisys-gr701w"), cycle: 0.05)
        defer { fake.stop() }
        var configuration = Configuration()
        configuration.authorization.defaultRule = .whenInUse
        let daemon = try InProcessDaemon(gpsdPort: fake.port, configuration: configuration, sessions: sessions)
        defer { daemon.stop() }
        let root = try SocketClient.connect(path: daemon.socketPath)
        _ = try root.readMessage()
        #expect(try root.request("observe", ["keyPath": "rawLocation"]).ok)
        let inUse = try Self.subscriber(
            daemon, uid: Self.whenInUseUID, type: "whenInUse", expect: "authorizedWhenInUse")
        try inUse.waitForLocations(3)
        #expect(!inUse.transcript.contains { $0.contains("appInBackground") })
    }
}
