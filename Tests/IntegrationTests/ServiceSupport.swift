import AklocTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// aklocd as a systemd service, end to end (DESIGN §5, issue 5): the real
/// binary, real gpsd through gpsfake, real socket activation through
/// `systemd-socket-activate`, a test-owned `NOTIFY_SOCKET`, and
/// `systemd-analyze` on the units. One parent suite, serialized, so its
/// nested suites never run side by side: gpsfake replays on a schedule and
/// the machine has two cores.
@Suite(.serialized) enum ServiceTests {}

/// The outside programs these tests drive, and what to do when one is missing
/// (the GPSDTools rule: skip, or fail under `AKLOC_REQUIRE_TOOLS=1`).
enum ServiceTools {
    static let systemdNames = ["systemd-socket-activate", "systemd-analyze"]

    static var missing: [String] {
        GPSDTools.missing + systemdNames.filter { TestProcess.which($0) == nil }
    }

    static var shouldRun: Bool { missing.isEmpty || GPSDTools.required }

    static var missingMessage: String {
        "missing \(missing.joined(separator: ", ")) (Debian: apt install gpsd gpsd-tools gpsd-clients python3-gps systemd)"
    }

    /// Records a failure (and returns false) when a required tool is missing.
    static func require() -> Bool {
        guard missing.isEmpty else {
            Issue.record("AKLOC_REQUIRE_TOOLS=1 and \(missingMessage)")
            return false
        }
        return true
    }

    /// A bundled capture: `mt3339` is a still receiver with a 3D fix from its
    /// first sentence, about 32 epochs.
    static func log(_ name: String) -> String {
        GPSFake.bundledLogDirectory.appendingPathComponent("\(name).log").path
    }
}

/// A temporary directory for one test, removed at deinit.
final class ScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-svc-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

extension SocketClient {
    /// The next message that is the given event.
    func waitForEvent(_ name: String, timeout: Double = 20) throws -> [String: Any] {
        try waitFor(timeout: timeout) { $0["event"] as? String == name }
    }

    /// Every message until end of file, within `timeout` seconds.
    func readUntilClosed(timeout: Double = 5) throws -> [[String: Any]] {
        var messages: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(timeout)
        while let line = try readLine(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
            if let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] {
                messages.append(object)
            }
        }
        return messages
    }
}

/// The `result` object of an ok reply.
func result(_ reply: [String: Any]) -> [String: Any]? { reply["result"] as? [String: Any] }

/// Waits, bounded, until `condition` holds for the file's text (the daemon
/// writes it on its own schedule; there is no message to wait on).
func waitForFile(_ path: String, timeout: Double = 10, _ condition: (String) -> Bool) -> String? {
    let deadline = Date().addingTimeInterval(timeout)
    repeat {
        if let text = try? String(contentsOfFile: path, encoding: .utf8), condition(text) { return text }
        usleep(20_000)
    } while Date() < deadline
    return nil
}

func milliseconds(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    return String(format: "%.1f ms", Double(seconds) * 1000 + Double(attoseconds) / 1e15)
}
