import AklocTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The suites that make real accounts and replay captures through gpsfake,
/// nested here so they run one test at a time across suites: gpsfake feeds
/// 1.4 s after it starts whether or not aklocd is there, the tests share
/// the passwd database, and the load test wants the two cores to itself.
@Suite(.serialized, .enabled(if: AuthorizationStage.shouldRun, .init(rawValue: AuthorizationStage.skipMessage)))
enum RealUsers {}

/// One end-to-end setting for the authorization and lifecycle tests: real
/// users and groups, a real gpsd (gpsfake replaying a bundled capture) and
/// the real aklocd, all removed by `tearDown()`.
final class AuthorizationStage {
    let accounts = SystemAccounts()
    private(set) var fake: GPSFake?
    private(set) var daemon: DaemonProcess?
    /// gpspipe on the same gpsd, when `start` was asked for one.
    private(set) var pipe: GPSPipe?
    private var gpsd: pid_t?
    private var segmentsBefore: Set<Int32> = []

    /// Run when everything is there, or when it is required (so it fails).
    static var shouldRun: Bool { (GPSDTools.available && SystemAccounts.available) || GPSDTools.required }

    static var skipMessage: String {
        "skipped: \(SystemAccounts.available ? GPSDTools.missingMessage : SystemAccounts.unavailableMessage)"
    }

    /// Records a failure (instead of a confusing error later) when something is missing.
    static func requireTools() -> Bool {
        guard GPSDTools.available else {
            Issue.record("AKLOC_REQUIRE_TOOLS=1 and \(GPSDTools.missingMessage)")
            return false
        }
        guard SystemAccounts.available, access(PeerConnector.python, X_OK) == 0 else {
            Issue.record("AKLOC_REQUIRE_TOOLS=1 and \(SystemAccounts.unavailableMessage), \(PeerConnector.python)")
            return false
        }
        return true
    }

    static func capture(_ name: String) -> String {
        GPSFake.bundledLogDirectory.appendingPathComponent("\(name).log").path
    }

    /// Starts gpsfake replaying `log` (paced by `cycle` s per sentence), then
    /// aklocd with `config` reading it. gpsfake feeds 1.4 s after it listens:
    /// a client that must see the whole replay subscribes right after this.
    /// With `log` nil, aklocd points at a port where no gpsd listens.
    /// `loop` replays the log over and over until `tearDown`, so fixes keep
    /// coming however long a loaded machine takes to reach a wait for them
    /// (one pass of navisys-gr701w lasts about 9 s); without it gpsfake
    /// exits after one pass.
    func start(
        config: String, log: String? = "navisys-gr701w", cycle: Double = 0.05, loop: Bool = true,
        extraArguments: [String] = [], launcher: [String] = [], gpspipe: Bool = false
    ) throws {
        segmentsBefore = Set(SharedMemory.segments().map(\.key))
        var port = FreePort.loopbackTCP()
        if let log {
            let fake = try GPSFake.start(log: Self.capture(log), cycle: cycle, loop: loop)
            self.fake = fake
            gpsd = fake.gpsdPID
            port = fake.port
            // Before aklocd, so the reference sees the replay from its first line.
            if gpspipe { pipe = try GPSPipe(port: fake.port) }
        }
        daemon = try DaemonProcess(
            gpsdPort: port, config: config, extraArguments: extraArguments, launcher: launcher)
    }

    var socketPath: String { daemon!.socketPath }

    /// A connection made by `user` (see `PeerConnector`), past its `hello`.
    func connect(as user: SystemAccounts.User) throws -> (SocketClient, hello: [String: Any]) {
        let client = try PeerConnector.connect(socketPath, uid: user.uid, gid: user.gid)[0]
        return (client, try client.readMessage())
    }

    /// A connection as root (this process), past its `hello`.
    func connectAsRoot() throws -> (SocketClient, hello: [String: Any]) {
        try daemon!.connect()
    }

    func tearDown(sourceLocation: SourceLocation = #_sourceLocation) {
        pipe?.stop()
        daemon?.stop()
        if let fake {
            fake.stop()
            #expect(!fake.process.isRunning, "gpsfake still running", sourceLocation: sourceLocation)
            if let gpsd { #expect(TestProcess.isDead(gpsd), "gpsd still running", sourceLocation: sourceLocation) }
            let leaked = SharedMemory.segments().filter {
                $0.key == SharedMemory.gpsdKey(port: fake.port)
                    || (SharedMemory.ntpKeys.contains($0.key) && $0.attached == 0 && !segmentsBefore.contains($0.key))
            }
            #expect(leaked.isEmpty, "leaked shared memory: \(leaked)", sourceLocation: sourceLocation)
        }
        accounts.removeAll()
        #expect(accounts.leftovers.isEmpty, "accounts left behind", sourceLocation: sourceLocation)
    }
}

// MARK: - Reading the protocol

// `event`, `notification` and `errorCode` come from LiveReplay.swift.
extension [String: Any] {
    var isReply: Bool { self["ok"] != nil }
    var succeeded: Bool { self["ok"] as? Bool == true }
    var resultObject: [String: Any]? { self["result"] as? [String: Any] }
    /// The position a message carries: a delegate update, a first location,
    /// or a change of a location key path.
    var position: [String: Any]? {
        switch event {
        case "didUpdateLocation", "didGetFirstLocation": self["location"] as? [String: Any]
        case "change":
            (self["keyPath"] as? String).flatMap { $0.hasPrefix("rawLocation") || $0.hasPrefix("myLocation") }
                == true ? self["new"] as? [String: Any] : nil
        default: nil
        }
    }
}

extension SocketClient {
    /// Sends a request; returns the events that came before its reply, and the reply.
    func exchange(
        _ op: String, _ arguments: [String: Any] = [:], timeout: Double = 10
    ) throws -> (events: [[String: Any]], reply: [String: Any]) {
        var events: [[String: Any]] = []
        let reply = try request(op, arguments, timeout: timeout) { events.append($0) }
        return (events, reply)
    }

    /// Reads until `count` location events have arrived; returns every message read.
    @discardableResult
    func waitForLocations(_ count: Int, timeout: Double = 30) throws -> [[String: Any]] {
        var seen: [[String: Any]] = []
        var locations = 0
        _ = try waitFor(timeout: timeout, skipped: { seen.append($0) }) { message in
            seen.append(message)
            if message.position != nil { locations += 1 }
            return locations >= count
        }
        return seen
    }

    /// Reads until a message matches; returns every message read, the match last.
    func collect(timeout: Double = 10, until match: ([String: Any]) -> Bool) throws -> [[String: Any]] {
        var seen: [[String: Any]] = []
        let last = try waitFor(timeout: timeout, skipped: { seen.append($0) }, match)
        return seen + [last]
    }

    /// Whether any line received so far carries a position.
    var sawLocation: Bool {
        transcript.contains { $0.contains("\"latitude\"") || $0.contains("\"longitude\"") }
    }
}
