import AklocCore
import AklocTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The Debian package end to end (issue 17, DESIGN §14): `make deb`, lintian,
/// `apt-get install ./akloc_*.deb` on this machine, the installed files,
/// units, accounts and programs (the installed aklocd, as user akloc, reading
/// a gpsfake replay; the installed akloc reading a fix from it), then
/// `apt-get remove` (the conffile stays) and `apt-get purge` (nothing stays).
///
/// It installs into the real system, so it needs root (skipped without,
/// failed under `AKLOC_REQUIRE_TOOLS=1`), and it refuses to run where an
/// akloc package is already installed (it would replace and purge it). The
/// accounts akloc and akloc-admin stay after the purge, as Debian leaves
/// system users.
@Suite(
    .serialized,
    .enabled(
        if: DebianPackage.shouldRun(DebianPackage.packageTools) && (GPSDTools.available || GPSDTools.required)
            && (getuid() == 0 || GPSDTools.required),
        "skipped: needs root, \(DebianPackage.missingMessage(DebianPackage.packageTools)) \(GPSDTools.missingMessage)"
    ))
struct DebianPackageTests {
    static let root = Binaries.packageRoot.path
    static let units = ["/usr/lib/systemd/system/akloc.socket", "/usr/lib/systemd/system/aklocd.service"]
    static let maximumExposure = 1.5
    static let apt = ["-y", "-q", "-o", "DPkg::Lock::Timeout=300"]
    static let aptEnvironment = ["DEBIAN_FRONTEND": "noninteractive"]

    /// dpkg's idea of the package: "installed", "config-files", or nil when
    /// it does not know it (never installed, or purged).
    static func packageState() throws -> String? {
        let query = try DebianPackage.run("dpkg-query", ["-W", "-f=${db:Status-Status}", "akloc"])
        guard query.code == 0, !query.stdout.isEmpty, query.stdout != "not-installed" else { return nil }
        return query.stdout
    }

    static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    static func mode(_ path: String) -> (mode: Int, user: String, group: String)? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        return (
            (attributes[.posixPermissions] as? Int) ?? -1, (attributes[.ownerAccountName] as? String) ?? "?",
            (attributes[.groupOwnerAccountName] as? String) ?? "?"
        )
    }

    static func elapsed(since start: Date) -> String { String(format: "%.0f s", Date().timeIntervalSince(start)) }

    @Test func buildLintInstallRunRemoveAndPurge() throws {
        guard DebianPackage.require(DebianPackage.packageTools), LiveReplay.requireTools() else { return }
        guard getuid() == 0 else {
            Issue.record("the package test installs into this system and needs root")
            return
        }
        if let state = try Self.packageState() {
            Issue.record(
                "an akloc package is already \(state) here; the test would replace and purge it (apt-get purge akloc)")
            return
        }
        let architecture = try DebianPackage.run("dpkg", ["--print-architecture"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let name = "akloc_\(AklocVersion.string)_\(architecture)"

        // make deb: the static release build, dpkg-buildpackage, debhelper.
        var start = Date()
        let make = try DebianPackage.run(
            "make", ["-C", Self.root, "deb"], environment: ["MAKEFLAGS": "", "MAKELEVEL": "", "MFLAGS": ""],
            timeout: 1500)
        #expect(make.code == 0, "make deb:\n\(make.output.suffix(6000))")
        print("make deb: \(Self.elapsed(since: start))")
        let deb = "\(Self.root)/\(name).deb"
        try #require(FileManager.default.fileExists(atPath: deb), "no \(deb): \(make.output.suffix(3000))")

        start = Date()
        let lintian = try DebianPackage.run(
            "lintian", ["--fail-on", "error", "\(Self.root)/build/deb/\(name).changes"], timeout: 600)
        let findings = lintian.stdout.split(separator: "\n").filter { $0.hasPrefix("E:") || $0.hasPrefix("W:") }
        #expect(lintian.code == 0, "lintian:\n\(lintian.output)")
        #expect(!findings.contains { $0.hasPrefix("E:") }, "lintian errors:\n\(findings.joined(separator: "\n"))")
        print("lintian: \(findings.count) errors and warnings, \(Self.elapsed(since: start))")

        let fields = try DebianPackage.run("dpkg-deb", ["-f", deb, "Depends", "Recommends"]).stdout
        for dependency in [
            "iso-codes", "tzdata", "libdbus-1-3", "libsystemd0", "libmosquitto1", "gpsd", "libjs-leaflet",
        ] {
            #expect(fields.contains(dependency), "\(dependency) in:\n\(fields)")
        }
        // aklocd links libgps.a (Package.swift): gpsd's libraries are not a dependency, gpsd only a recommendation.
        #expect(!fields.contains("libgps"), "libgps is linked in statically: \(fields)")
        #expect(!fields.contains("swift"), "no Swift runtime package: \(fields)")
        let conffiles = try DebianPackage.run("dpkg-deb", ["-I", deb, "conffiles"]).stdout
        #expect(conffiles.split(separator: "\n") == ["/etc/akloc/akloc.conf"], "conffiles: \(conffiles)")

        // Installed, and purged whatever happens below.
        start = Date()
        let install = try DebianPackage.run(
            "apt-get", Self.apt + ["install", deb], environment: Self.aptEnvironment, timeout: 600)
        defer {
            if (try? Self.packageState()) != nil {
                _ = try? DebianPackage.run(
                    "apt-get", Self.apt + ["purge", "akloc"], environment: Self.aptEnvironment, timeout: 600)
            }
        }
        try #require(install.code == 0, "apt-get install:\n\(install.output)")
        #expect(try Self.packageState() == "installed")
        print("apt-get install: \(Self.elapsed(since: start))")
        let files = try DebianPackage.run("dpkg-query", ["-L", "akloc"]).stdout.split(separator: "\n")
            .map(String.init)
        // What must be gone after the purge: every file, and the package's
        // own directories (not /usr/bin or /usr/share/man/man1).
        let ownPaths = files.filter { path in
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            return !isDirectory.boolValue || path.contains("akloc")
        }

        try checkInstalledFiles(files)
        try checkInstalledPrograms()
        try checkInstalledUnits()
        try checkInstalledManualPages()
        try runInstalledDaemonAgainstReplay()
        try reinstallKeepsTheEditedConfig(deb)

        // remove: the program goes, the conffile and the state stay (policy).
        let remove = try DebianPackage.run(
            "apt-get", Self.apt + ["remove", "akloc"], environment: Self.aptEnvironment, timeout: 600)
        #expect(remove.code == 0, "apt-get remove:\n\(remove.output)")
        #expect(try Self.packageState() == "config-files")
        for path in ["/usr/bin/aklocd", "/usr/bin/akloc"] + Self.units {
            #expect(!Self.exists(path), "\(path) after remove")
        }
        #expect(Self.exists("/etc/akloc/akloc.conf"), "the conffile stays until purge")

        // purge: nothing of the package is left.
        start = Date()
        let purge = try DebianPackage.run(
            "apt-get", Self.apt + ["purge", "akloc"], environment: Self.aptEnvironment, timeout: 600)
        #expect(purge.code == 0, "apt-get purge:\n\(purge.output)")
        #expect(try Self.packageState() == nil)
        print("apt-get remove and purge: \(Self.elapsed(since: start))")
        let leftovers =
            (ownPaths + [
                "/var/lib/akloc", "/etc/akloc", "/etc/systemd/system/sockets.target.wants/akloc.socket",
                "/etc/systemd/system/multi-user.target.wants/aklocd.service",
            ]).filter(Self.exists)
        #expect(leftovers.isEmpty, "left after purge: \(leftovers)")
        let helperState =
            (try? FileManager.default.subpathsOfDirectory(
                atPath: "/var/lib/systemd/deb-systemd-helper-enabled")) ?? []
        #expect(helperState.filter { $0.contains("akloc") }.isEmpty, "deb-systemd-helper state: \(helperState)")
    }

    /// The layout, the conffile, and what sysusers and tmpfiles made at postinst.
    func checkInstalledFiles(_ files: [String]) throws {
        for path in [
            "/usr/bin/aklocd", "/usr/bin/akloc", "/usr/lib/sysusers.d/akloc.conf", "/usr/lib/tmpfiles.d/akloc.conf",
            "/etc/akloc/akloc.conf", "/usr/share/man/man1/akloc.1.gz", "/usr/share/man/man8/aklocd.8.gz",
            "/usr/share/man/man5/akloc.conf.5.gz", "/usr/share/doc/akloc/copyright",
        ] + Self.units {
            #expect(files.contains(path), "\(path) is not in dpkg -L akloc")
        }
        #expect(Self.mode("/usr/bin/aklocd")?.mode == 0o755)
        let config = FileManager.default.contents(atPath: "/etc/akloc/akloc.conf")
        #expect(config == FileManager.default.contents(atPath: "\(Self.root)/config/akloc.conf"))
        let data = (try? FileManager.default.contentsOfDirectory(atPath: "\(Self.root)/data")) ?? []
        for file in data where !file.hasPrefix(".") {
            #expect(files.contains("/usr/share/akloc/\(file)"), "data/\(file) is not in /usr/share/akloc")
        }
        let policies = (try? FileManager.default.contentsOfDirectory(atPath: "\(Self.root)/dbus")) ?? []
        for policy in policies where policy.hasSuffix(".conf") {
            #expect(files.contains("/usr/share/dbus-1/system.d/\(policy)"), "dbus/\(policy) is not installed")
        }

        let user = try DebianPackage.run("getent", ["passwd", "akloc"])
        #expect(user.code == 0, "systemd-sysusers made the user akloc")
        #expect(try DebianPackage.run("getent", ["group", "akloc-admin"]).code == 0)
        let etc = Self.mode("/etc/akloc")
        #expect(
            etc?.mode == 0o775 && etc?.user == "root" && etc?.group == "akloc", "/etc/akloc: \(String(describing: etc))"
        )
        let conf = Self.mode("/etc/akloc/akloc.conf")
        #expect(conf?.mode == 0o664 && conf?.group == "akloc", "akloc.conf: \(String(describing: conf))")
        let state = Self.mode("/var/lib/akloc")
        #expect(state?.mode == 0o700 && state?.user == "akloc", "/var/lib/akloc: \(String(describing: state))")
    }

    /// The installed programs run, need no Swift runtime, and agree on the version.
    func checkInstalledPrograms() throws {
        for binary in ["/usr/bin/aklocd", "/usr/bin/akloc"] {
            let ldd = try DebianPackage.run("ldd", [binary])
            #expect(ldd.code == 0, "ldd \(binary): \(ldd.output)")
            for line in ldd.stdout.split(separator: "\n") {
                let library = line.trimmingCharacters(in: .whitespaces)
                let foreign = ["libswift", "libFoundation", "libdispatch", "libBlocksRuntime", "_FoundationICU"]
                #expect(!foreign.contains { library.contains($0) }, "\(binary) links \(library)")
                #expect(!library.contains("not found") && !library.contains("/opt/"), "\(binary): \(library)")
            }
        }
        let version = try DebianPackage.run("/usr/bin/aklocd", ["--version"])
        #expect(version.code == 0 && version.stdout == "aklocd \(AklocVersion.string)\n", "\(version.output)")
        let check = try DebianPackage.run("/usr/bin/aklocd", ["--check-config"])
        #expect(check.code == 0 && check.stdout == "/etc/akloc/akloc.conf: valid\n", "\(check.output)")
        let help = try DebianPackage.run("/usr/bin/akloc", ["--help"])
        #expect(help.code == 0 && help.stdout.contains("Commands:"), "\(help.output)")
        let cliVersion = try DebianPackage.run("/usr/bin/akloc", ["--version"])
        #expect(cliVersion.stdout.contains(AklocVersion.string), "\(cliVersion.output)")
    }

    /// systemd's view of the installed units, and the enable policy: the
    /// socket enabled, the service left to it.
    func checkInstalledUnits() throws {
        let verify = try DebianPackage.run("systemd-analyze", ["verify"] + Self.units)
        #expect(verify.code == 0 && verify.output.isEmpty, "systemd-analyze verify:\n\(verify.output)")
        let security = try DebianPackage.run(
            "systemd-analyze", ["security", "--offline=yes", "--no-pager", Self.units[1]])
        let rating = security.stdout.split(separator: "\n")
            .first { $0.contains("Overall exposure level for aklocd.service:") }
            .flatMap { $0.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) } }
        let exposure = try #require(rating, "no rating in:\n\(security.output)")
        #expect(exposure <= Self.maximumExposure, "\(security.stdout)")
        print("systemd-analyze security --offline=yes (installed aklocd.service): \(exposure)")

        let wants = "/etc/systemd/system/sockets.target.wants/akloc.socket"
        let target = try? FileManager.default.destinationOfSymbolicLink(atPath: wants)
        #expect(target?.hasSuffix("/systemd/system/akloc.socket") == true, "\(wants) -> \(target ?? "nothing")")
        #expect(!Self.exists("/etc/systemd/system/multi-user.target.wants/aklocd.service"))
    }

    /// Each installed page: found by name, and clean under `man --warnings`.
    func checkInstalledManualPages() throws {
        for (section, page) in [("1", "akloc"), ("8", "aklocd"), ("5", "akloc.conf")] {
            let found = try DebianPackage.run("man", ["-w", section, page])
            #expect(found.stdout.hasPrefix("/usr/share/man/man\(section)/\(page).\(section)"), "\(found.output)")
            let man = try DebianPackage.manWarnings("/usr/share/man/man\(section)/\(page).\(section).gz")
            #expect(man.code == 0 && man.warnings.isEmpty, "man --warnings \(page)(\(section)):\n\(man.warnings)")
        }
    }

    /// The upgrade path of the maintainer scripts (`configure` with the old
    /// version): the administrator's config, as `akloc authorize` leaves it,
    /// is kept with its group and mode, and the state survives.
    func reinstallKeepsTheEditedConfig(_ deb: String) throws {
        let path = "/etc/akloc/akloc.conf"
        let original = try String(contentsOfFile: path, encoding: .utf8)
        let edited = original + "\n[authorization]\nroot = always\n"
        try Data(edited.utf8).write(to: URL(fileURLWithPath: path))
        let reinstall = try DebianPackage.run(
            "apt-get", Self.apt + ["install", "--reinstall", deb], environment: Self.aptEnvironment, timeout: 600)
        #expect(reinstall.code == 0, "apt-get install --reinstall:\n\(reinstall.output)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == edited, "the edited conffile is kept")
        let conf = Self.mode(path)
        #expect(conf?.mode == 0o664 && conf?.group == "akloc", "akloc.conf: \(String(describing: conf))")
        #expect(Self.exists("/var/lib/akloc/state.json"), "the state survives an upgrade")
        let check = try DebianPackage.run("/usr/bin/aklocd", ["--check-config"])
        #expect(check.code == 0, "\(check.output)")
    }

    /// The installed aklocd as user akloc, with the installed config and
    /// state directory, reading real gpsd; the installed akloc gets a fix.
    func runInstalledDaemonAgainstReplay() throws {
        let fake = try GPSFake.start(log: LiveReplay.bundled("humminbird-M37"), cycle: 0.1)
        defer { fake.stop() }
        let scratch = try ScratchDirectory()
        chmod(scratch.url.path, 0o755)
        let runtime = scratch.path("run")
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        #expect(try DebianPackage.run("chown", ["akloc:akloc", runtime]).code == 0)
        let socket = "\(runtime)/akloc.sock"
        let daemon = try TestProcess(
            "setpriv",
            [
                "--reuid=akloc", "--regid=akloc", "--init-groups", "--", "/usr/bin/aklocd", "--gpsd",
                "127.0.0.1:\(fake.port)", "--socket", socket, "--log-level", "debug",
            ],
            removing: DaemonProcess.systemdVariables + ["AKLOC_SOCKET"])
        defer { daemon.kill() }
        let client = try SocketClient.connect(path: socket, timeout: 15)
        let hello = try client.readMessage()
        #expect(hello["event"] as? String == "hello", "\(hello)")

        let location = try DebianPackage.run(
            "/usr/bin/akloc", ["--socket", socket, "request-location", "--timeout", "20"], timeout: 60)
        #expect(location.code == 0, "akloc request-location: \(location.output)\naklocd: \(daemon.stderr())")
        let fix = try JSONSerialization.jsonObject(with: Data(location.stdout.utf8)) as? [String: Any]
        #expect(fix?["latitude"] as? Double != nil && fix?["longitude"] as? Double != nil, "\(location.stdout)")
        try checkInstalledGeoData(socket: socket, daemon: daemon)

        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 15) == 0, "aklocd stops cleanly: \(daemon.stderr())")
        let state = Self.mode("/var/lib/akloc/state.json")
        #expect(state?.user == "akloc" && state?.mode == 0o600, "state.json: \(String(describing: state))")
        let saved = FileManager.default.contents(atPath: "/var/lib/akloc/state.json").flatMap {
            try? JSONSerialization.jsonObject(with: $0) as? [String: Any]
        }
        #expect(saved?["lastLocation"] as? [String: Any] != nil, "state.json: \(String(describing: saved))")
    }
}

extension DebianPackageTests {
    /// The installed aklocd, with no `[geo] data-dir` in the installed
    /// config, finds the packaged data in /usr/share/akloc beside /usr/bin:
    /// the installed akloc names the replay's place (the capture is a boat in
    /// New Hampshire) and looks a country up by code.
    func checkInstalledGeoData(socket: String, daemon: TestProcess) throws {
        let config = try String(contentsOfFile: "/etc/akloc/akloc.conf", encoding: .utf8)
        #expect(!config.contains("\ndata-dir"), "the installed config leaves [geo] data-dir to its default")
        let place = try DebianPackage.run("/usr/bin/akloc", ["--socket", socket, "where", "--json"], timeout: 60)
        #expect(place.code == 0, "akloc where: \(place.output)\naklocd: \(daemon.stderr())")
        let placemark = try JSONSerialization.jsonObject(with: Data(place.stdout.utf8)) as? [String: Any]
        #expect(placemark?["isoCountryCode"] as? String == "US", "\(place.stdout)")
        #expect(placemark?["country"] as? String == "United States", "\(place.stdout)")
        let zone = placemark?["timeZone"] as? [String: Any]
        #expect(zone?["identifier"] as? String == "America/New_York", "\(place.stdout)")

        let country = try DebianPackage.run("/usr/bin/akloc", ["--socket", socket, "country", "gb"], timeout: 60)
        #expect(country.code == 0, "akloc country gb: \(country.output)\naklocd: \(daemon.stderr())")
        #expect(
            country.stdout == "🇬🇧 United Kingdom [GB GBR 826], calling code +44\n", "akloc country gb: \(country.output)"
        )
    }
}
