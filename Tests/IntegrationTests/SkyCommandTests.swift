import AklocTestSupport
import Foundation
import Testing

/// `akloc sky` against the real aklocd and a real gpsd replaying captures
/// with SKY reports: the live view in tmux (an 80 × 24 terminal), and
/// `--json` against gpspipe on the same gpsd.
@Suite(.serialized, .enabled(if: GPSDTools.shouldRun, "skipped: \(GPSDTools.missingMessage)"))
struct SkyCommandTests {
    static var tmuxRequired: Bool { GPSDTools.required }

    /// A table row: `GPS       29   29  46 133  44 Y`.
    static func tableRow(_ line: String) -> (prn: Int, used: Bool)? {
        let fields = line.prefix(31).split(separator: " ")
        guard fields.count == 7, let prn = Int(fields[1]), fields[6] == "Y" || fields[6] == "N" else { return nil }
        return (prn, fields[6] == "Y")
    }

    @Test func theLiveViewDrawsTableAndPlotUpdatesAndCtrlCRestoresTheTerminal() throws {
        guard LiveReplay.requireTools() else { return }
        guard Tmux.available else {
            if Self.tmuxRequired { Issue.record("AKLOC_REQUIRE_TOOLS=1 and tmux is missing (apt install tmux)") }
            return
        }
        let fake = try GPSFake.start(log: LiveReplay.bundled("navisys-gr701w"), cycle: 0.02, loop: true)
        defer { fake.stop() }
        let daemon = try DaemonProcess(gpsdPort: fake.port)
        defer { daemon.stop() }
        let tmux = try Tmux(columns: 80, rows: 24)
        defer { tmux.stop() }
        #expect(try tmux.format("#{alternate_on} #{cursor_flag}") == "0 1")
        try tmux.type("\(Binaries.akloc) --socket \(daemon.socketPath) sky")

        let drawn = try tmux.waitFor(timeout: 30) { lines in
            lines.contains { $0.hasPrefix("GNSS     PRN SVID  El  Az SNR U") }
                && lines.contains { Self.tableRow($0) != nil } && lines.contains { $0.contains(" used  HDOP") }
        }
        guard let first = drawn else {
            Issue.record("no table within 30 s: \(try tmux.capture().joined(separator: "\n"))")
            return
        }
        #expect(try tmux.format("#{alternate_on} #{cursor_flag}") == "1 0", "the alternate screen, no cursor")
        #expect(first.count == 24 && first.allSatisfy { $0.count <= 80 })
        // The plot beside the table: its compass points on the horizon ring,
        // and the PRNs of the table's satellites inside it.
        let plot = first.dropFirst(2).map { String($0.dropFirst(33)) }
        #expect(plot.first?.trimmingCharacters(in: .whitespaces) == "······N······", "\(plot)")
        #expect(plot.contains { $0.hasPrefix("W") && $0.hasSuffix("E") })
        #expect(plot.contains { $0.trimmingCharacters(in: .whitespaces) == "······S······" }, "\(plot)")
        let rows = first.compactMap(Self.tableRow)
        #expect(!rows.isEmpty)
        let plotText = plot.joined(separator: "\n")
        #expect(
            rows.contains { row in plotText.contains(row.used ? "[\(row.prn)]" : "\(row.prn)") },
            "no satellite of the table in the plot:\n\(first.joined(separator: "\n"))")
        // Rows agree with the header's count of used satellites, when all fit.
        if let header = first.first, let used = Int(header.split(separator: " ")[1].split(separator: "/")[0]),
            !first.contains(where: { $0.hasPrefix("… ") })
        {
            #expect(rows.filter(\.used).count == used, "\(first.joined(separator: "\n"))")
        }
        // It updates in place: the header changes while the replay runs.
        let later = try tmux.waitFor(timeout: 30) { $0.first != first.first && $0.first?.contains(" used ") == true }
        #expect(later != nil, "the view never changed")
        let capture = (later ?? first).joined(separator: "\n")
        print("akloc sky in tmux (80×24):\n\(capture)")

        try tmux.key("C-c")
        let restored = try tmux.waitFor(timeout: 10) { _ in
            (try? tmux.format("#{alternate_on} #{cursor_flag}")) == "0 1"
        }
        #expect(restored != nil, "Ctrl-C left the terminal in the view")
        try tmux.type("echo status=$?")
        #expect(try tmux.waitFor(timeout: 10) { $0.contains("status=0") } != nil, "Ctrl-C exits 0")
    }

    /// `akloc sky --json` during a replay: every line one `satellites`
    /// object, and the sequence gpspipe's distinct SKYs from akloc's first on.
    static func jsonReplay(_ logPath: String) throws -> (lines: [String], reference: [SkySummary], coalesced: Int) {
        let fake = try GPSFake.start(log: logPath)
        defer { fake.stop() }
        let pipe = try GPSPipe(port: fake.port)
        defer { pipe.stop() }
        let daemon = try DaemonProcess(gpsdPort: fake.port)
        defer { daemon.stop() }
        let sky = try TestProcess(Binaries.akloc, ["--socket", daemon.socketPath, "sky", "--json"])
        defer { sky.kill() }
        let (watcher, _) = try daemon.connect()
        _ = try watcher.request("observe", ["keyPath": "state"])
        _ = try watcher.waitFor(timeout: 240) { $0.notification == "sourceDisconnected" }
        _ = pipe.waitForExit(timeout: 30)
        // Changes coalesced for a client that fell behind (a loaded machine): akloc may skip only these.
        let status = try #require(try watcher.request("status").result as? [String: Any])
        let coalesced = try #require((status["counters"] as? [String: Any])?["eventsCoalesced"] as? Int)
        // The daemon's stop tells every client, after everything before it:
        // akloc has printed all its changes when it exits.
        #expect(daemon.terminate() == 0)
        #expect(sky.waitForExit(timeout: 15) == 69, "akloc sky --json: \(sky.stderr())")
        let lines = sky.stdout().split(separator: "\n").map(String.init)
        return (lines, SkySummary.changes(in: pipe.objects()), coalesced)
    }

    static func sharedLogsWithSky() -> [String] {
        guard let directory = GPSFake.sharedLogDirectory else { return [] }
        return GPSFake.logs(in: directory).filter { log in
            let check = (try? String(contentsOf: log.appendingPathExtension("chk"), encoding: .utf8)) ?? ""
            return check.contains("\"class\":\"SKY\"")
        }.map(\.path)
    }

    @Test(arguments: sharedLogsWithSky())
    func jsonMatchesGpspipeOnEverySharedCaptureWithSky(log: String) throws {
        guard LiveReplay.requireTools() else { return }
        let name = URL(fileURLWithPath: log).lastPathComponent
        let (lines, reference, coalesced) = try Self.jsonReplay(log)
        var seen: [SkySummary] = []
        for line in lines {
            let value = try? JSONSerialization.jsonObject(with: Data(line.utf8))
            guard let summary = SkySummary(akloc: value) else {
                Issue.record("\(name): not a satellites object: \(line.prefix(200))")
                return
            }
            seen.append(summary)
        }
        if reference.isEmpty {
            #expect(seen.isEmpty, "\(name): gpsd 3.22 sent no SKY, akloc printed \(seen.count)")
        } else if let mismatch = SkySummary.mismatch(seen, reference: reference, coalesced: coalesced) {
            Issue.record("\(name): \(mismatch)")
        }
        print(
            "\(name): akloc sky --json \(seen.count) lines, gpspipe \(reference.count) distinct SKYs, "
                + "\(coalesced) coalesced")
    }

    @Test func badArgumentsAreUsageErrors() throws {
        for arguments in [["sky", "extra"], ["sky", "--min", "-1"], ["sky", "--min", "x"], ["sky", "--bogus"]] {
            let process = try TestProcess(Binaries.akloc, ["--socket", "/nonexistent/akloc.sock"] + arguments)
            defer { process.kill() }
            #expect(process.waitForExit(timeout: 10) == 64, "\(arguments): \(process.stderr())")
        }
    }
}
