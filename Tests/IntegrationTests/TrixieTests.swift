import AklocCore
import AklocTestSupport
import Foundation
import Testing

/// Debian 13 (trixie) and its gpsd 3.25 (issue 31), in the minbase root
/// `make test` makes with debootstrap (scripts/trixie-root.sh, passed as
/// AKLOC_TRIXIE_ROOT): every capture replayed by trixie's gpsfake, each
/// epoch aklocd (the one built here, outside the root) delivers compared
/// with trixie's gpspipe; and the project's .deb installed there with apt,
/// `akloc status` against its aklocd, and purged.
@Suite(.serialized, .enabled(if: TrixieRoot.shouldRun, "skipped: no AKLOC_TRIXIE_ROOT (make test makes one)"))
struct TrixieTests {
    /// The cached root, or a recorded failure: under AKLOC_REQUIRE_TOOLS=1 it must be there.
    static func cachedRoot() -> String? {
        guard let root = TrixieRoot.cached else {
            Issue.record(
                "AKLOC_REQUIRE_TOOLS=1 and no AKLOC_TRIXIE_ROOT: `make test` makes it (scripts/trixie-root.sh)")
            return nil
        }
        return root
    }

    static var logs: URL { GPSFake.sharedLogDirectory ?? GPSFake.bundledLogDirectory }

    @Test func gpsd325GivesEveryEpochRightFromTheFirst() throws {
        guard let cached = Self.cachedRoot(), GPSDTools.available else {
            if TrixieRoot.cached != nil { Issue.record("\(GPSDTools.missingMessage)") }
            return
        }
        let root = try TrixieRoot(root: cached, binds: [(Self.logs.path, "/logs")])
        defer {
            root.stop()
            #expect(root.hostMounts.isEmpty, "mounts left on the host: \(root.hostMounts)")
        }
        let version = try root.run(["/usr/sbin/gpsd", "-V"])
        #expect(version.stdout.contains("3.25"), "trixie's gpsd: \(version.stdout) \(version.stderr)")
        var table: [String] = []
        var tpvs = 0
        var epochs = 0
        // Epochs that went out before gpsd's last TPV because gpsd had just
        // learned a new cycle ender (docs/semantics.md): reported, not hidden.
        var grown: [String] = []
        for log in GPSFake.logs(in: Self.logs) {
            let name = log.lastPathComponent
            let (source, fake, _) = try StartReplay.host(log: "/logs/\(name)", cycle: nil, launcher: root.launcher)
            let gpsd = fake.gpsdPID
            let replay = try StartReplay(source: source, policies: [])
            #expect(gpsd.map(TestProcess.isDead) ?? true, "\(name): gpsd left running")
            let ours = replay.rawEpochs
            let reference = FixEpoch.merged(replay.tpvs)
            let (problems, early) = FixEpoch.compare(ours, replay.tpvs, name: name)
            for problem in problems { Issue.record("gpsd 3.25: \(problem)") }
            grown += early
            let fixTPVs = replay.tpvs.filter { ($0["mode"] as? Int ?? 0) >= 2 && $0["time"] != nil }.count
            tpvs += fixTPVs
            epochs += reference.count
            table.append("\(name): aklocd \(ours.count), gpspipe \(reference.count) epochs from \(fixTPVs) TPVs")
        }
        print(
            "gpsd 3.25 (trixie), every epoch from the first:\n" + table.joined(separator: "\n")
                + "\n\(tpvs) TPVs with a fix in \(epochs) epochs; out early on a new cycle ender: "
                + (grown.isEmpty ? "none" : grown.joined(separator: "; ")))
    }

    @Test func theDebInstallsServesStatusAndPurgesOnTrixie() throws {
        guard let cached = Self.cachedRoot() else { return }
        let source = GPSFake.packageRoot.path
        let dpkg = try TestProcess("dpkg", ["--print-architecture"])
        _ = dpkg.waitForExit(timeout: 30)
        let architecture = dpkg.stdout().trimmingCharacters(in: .whitespacesAndNewlines)
        let name = "akloc_\(AklocVersion.string)_\(architecture).deb"
        let make = try TestProcess(
            "make", ["-C", source, "deb"], environment: ["MAKEFLAGS": "", "MAKELEVEL": "", "MFLAGS": ""])
        #expect(
            make.waitForExit(timeout: 1500) == 0,
            "make deb:\n\(make.stdout().suffix(4000))\(make.stderr().suffix(4000))")
        try #require(FileManager.default.fileExists(atPath: "\(source)/\(name)"), "make deb made no \(name)")

        let root = try TrixieRoot(root: cached, binds: [(source, "/src")])
        defer {
            root.stop()
            #expect(root.hostMounts.isEmpty, "mounts left on the host: \(root.hostMounts)")
        }
        let apt = ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "-y", "-q", "--no-install-recommends"]
        let install = try root.run(apt + ["install", "/src/\(name)"], timeout: 900)
        #expect(
            install.code == 0, "apt-get install \(name) on trixie:\n\(install.stdout.suffix(4000))\(install.stderr)")
        guard install.code == 0 else { return }
        let state = try root.run(["dpkg-query", "-W", "-f", "${Status} ${Version}", "akloc"])
        #expect(state.stdout == "install ok installed \(AklocVersion.string)", "\(state.stdout) \(state.stderr)")

        // The package's aklocd, run by hand (the root has no systemd), and its akloc.
        let daemon = try TestProcess(
            root.launcher[0],
            Array(root.launcher.dropFirst()) + [
                "/usr/bin/aklocd", "--socket", "/run/akloc-test.sock", "--state-dir", "/var/lib/akloc-test",
                "--gpsd", "127.0.0.1:1",
            ])
        defer { daemon.kill() }
        var status = try root.run(["/usr/bin/akloc", "--socket", "/run/akloc-test.sock", "status"])
        let deadline = Date().addingTimeInterval(30)
        while status.code != 0, daemon.isRunning, Date() < deadline {
            usleep(100_000)
            status = try root.run(["/usr/bin/akloc", "--socket", "/run/akloc-test.sock", "status"])
        }
        #expect(
            status.code == 0, "akloc status on trixie: \(status.stdout) \(status.stderr) aklocd: \(daemon.stderr())")
        #expect(status.stdout.contains("source:") && status.stdout.contains("127.0.0.1:1"), "\(status.stdout)")
        daemon.kill()

        let purge = try root.run(apt + ["purge", "akloc"], timeout: 600)
        #expect(purge.code == 0, "apt-get purge akloc on trixie:\n\(purge.stdout.suffix(3000))\(purge.stderr)")
        let after = try root.run(["dpkg-query", "-W", "-f", "${Status}", "akloc"])
        #expect(!after.stdout.contains("installed"), "after the purge: \(after.stdout) \(after.stderr)")
        #expect(try root.run(["test", "-e", "/usr/bin/aklocd"]).code == 1, "/usr/bin/aklocd left after the purge")
        print("trixie: \(name) installed, akloc status answered, purged")
    }
}
