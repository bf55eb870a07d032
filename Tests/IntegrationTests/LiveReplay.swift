import AklocTestSupport
import Foundation
import Testing

/// Real gpsd (through gpsfake) replaying a capture, and the real aklocd
/// reading it, each on its own free port and private socket.
final class LiveReplay {
    let fake: GPSFake
    let daemon: DaemonProcess
    private let gpsdPID: pid_t?

    init(log name: String, cycle: Double?, config: String = "") throws {
        fake = try GPSFake.start(log: LiveReplay.bundled(name), cycle: cycle)
        gpsdPID = fake.gpsdPID
        do {
            daemon = try DaemonProcess(gpsdPort: fake.port, config: config)
        } catch {
            fake.stop()
            throw error
        }
    }

    deinit { stop() }

    func stop() {
        daemon.stop()
        fake.stop()
    }

    static func bundled(_ name: String) -> String {
        GPSFake.bundledLogDirectory.appendingPathComponent("\(name).log").path
    }

    /// False (with a recorded failure) when gpsd's tools are required but missing.
    static func requireTools() -> Bool {
        guard GPSDTools.available else {
            Issue.record("AKLOC_REQUIRE_TOOLS=1 and \(GPSDTools.missingMessage)")
            return false
        }
        return true
    }
}

extension [String: Any] {
    var event: String? { self["event"] as? String }
    var notification: String? { self["notification"] as? String }
    var location: [String: Any]? { self["location"] as? [String: Any] }
    var ok: Bool? { self["ok"] as? Bool }
    var errorCode: String? { (self["error"] as? [String: Any])?["code"] as? String }
    var result: Any? { self["result"] }
    var isLocationEvent: Bool { event == "didUpdateLocation" || event == "didGetFirstLocation" }
}
