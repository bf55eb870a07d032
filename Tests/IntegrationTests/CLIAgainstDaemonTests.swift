import AklocTestSupport
import Foundation
import Testing

/// The real `akloc` binary against the real aklocd reading real gpsd.
@Suite(.serialized, .enabled(if: GPSDTools.shouldRun, "skipped: \(GPSDTools.missingMessage)"))
struct CLIAgainstDaemonTests {
    /// Runs akloc to completion; returns (exit code, stdout, stderr).
    static func akloc(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 30) throws
        -> (code: Int32?, out: String, err: String)
    {
        let process = try TestProcess(Binaries.akloc, arguments, environment: environment)
        defer { process.kill() }
        let code = process.waitForExit(timeout: timeout)
        return (code, process.stdout(), process.stderr())
    }

    /// Waits, bounded, until `process` has written `count` lines matching `match`.
    static func lines(of process: TestProcess, count: Int, timeout: Double = 30, _ match: (String) -> Bool) -> [String]
    {
        let deadline = Date().addingTimeInterval(timeout)
        var found: [String] = []
        while Date() < deadline {
            found = process.stdout().split(separator: "\n").map(String.init).filter(match)
            if found.count >= count || !process.isRunning { break }
            usleep(20_000)
        }
        return found
    }

    @Test func everyCommandAgainstALiveDaemon() throws {
        guard LiveReplay.requireTools() else { return }
        let replay = try LiveReplay(log: "humminbird-M37", cycle: 0.1)
        let socket = ["--socket", replay.daemon.socketPath]

        // watch: NDJSON exactly as the daemon sends it, one event a line.
        let watch = try TestProcess(Binaries.akloc, socket + ["watch", "--min", "1"])
        defer { watch.kill() }
        let updates = Self.lines(of: watch, count: 3) { $0.contains("\"didUpdateLocation\"") }
        #expect(updates.count >= 3, "watch printed: \(watch.stdout()) \(watch.stderr())")
        for line in updates {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect((object?["location"] as? [String: Any])?["latitude"] as? Double != nil)
        }
        watch.signal(SIGINT)
        #expect(watch.waitForExit(timeout: 10) == 0, "watch exits 0 on Ctrl-C")

        let human = try TestProcess(Binaries.akloc, socket + ["watch", "--human", "--min", "1"])
        defer { human.kill() }
        let readable = Self.lines(of: human, count: 2) { $0.contains(" N ") && $0.contains(" W") }
        #expect(readable.count >= 2, "watch --human printed: \(human.stdout())")
        human.signal(SIGTERM)
        #expect(human.waitForExit(timeout: 10) == 0)

        // Key paths: each observed with `initial`.
        let keyPaths = try TestProcess(Binaries.akloc, socket + ["watch", "state", "rawLocation.speed"])
        defer { keyPaths.kill() }
        #expect(!Self.lines(of: keyPaths, count: 1) { $0.contains("\"rawLocation.speed\"") }.isEmpty)
        keyPaths.signal(SIGINT)
        _ = keyPaths.waitForExit(timeout: 10)

        let status = try Self.akloc(socket + ["status"])
        #expect(status.code == 0)
        #expect(status.out.contains("state:") && status.out.contains("source:") && status.out.contains("clients:"))
        let json = try Self.akloc(socket + ["status", "--json"])
        let parsed = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any]
        #expect(parsed?["state"] as? String == "running")

        let state = try Self.akloc(socket + ["get", "state"])
        #expect(state.code == 0 && state.out.contains("running"))
        let location = try Self.akloc(socket + ["request-location", "--timeout", "10"])
        #expect(location.code == 0 && location.out.contains("latitude"), "\(location)")

        // The socket from the environment, as documented.
        let fromEnvironment = try Self.akloc(
            ["get", "authorizationStatus"], environment: ["AKLOC_SOCKET": replay.daemon.socketPath])
        #expect(fromEnvironment.code == 0 && fromEnvironment.out.contains("authorizedAlways"))

        #expect(try Self.akloc(socket + ["pause"]).code == 0)
        #expect(try Self.akloc(socket + ["get", "state"]).out.contains("paused"))
        #expect(try Self.akloc(socket + ["resume"]).code == 0)
        #expect(try Self.akloc(socket + ["reload"]).code == 0)

        #expect(try Self.akloc(socket + ["get", "noSuchPath"]).code == 64)
        #expect(try Self.akloc(socket + ["frobnicate"]).code == 64)
        let unreachable = try Self.akloc(["--socket", replay.daemon.directory.path + "/absent.sock", "status"])
        #expect(unreachable.code == 69)
        #expect(unreachable.err.contains("absent.sock"), "the message names the socket: \(unreachable.err)")
    }
}
