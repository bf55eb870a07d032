import AklocTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension ServiceTests {
    /// The units as systemd sees them (`systemd/check-units.sh`: verify, and
    /// the offline security rating), and `make install` into a DESTDIR.
    /// This is the one place the suite runs check-units.sh.
    @Suite(.enabled(if: ServiceTools.shouldRun, "skipped: \(ServiceTools.missingMessage)"))
    struct InstallTests {
        static let maximumExposure = 2.0

        /// Runs check-units.sh (on `directory`, or the repository's units)
        /// and returns its exit code, output and the rating it printed.
        static func checkUnits(_ directory: String? = nil, aklocd: String) throws -> (
            code: Int32?, output: String, rating: Double?
        ) {
            let script = Binaries.packageRoot.appendingPathComponent("systemd/check-units.sh").path
            let process = try TestProcess(
                "/bin/sh", [script] + (directory.map { [$0] } ?? []),
                environment: ["AKLOCD": aklocd, "MAX_EXPOSURE": String(maximumExposure)])
            let code = process.waitForExit(timeout: 60)
            let output = process.stdout() + process.stderr()
            // "→ Overall exposure level for aklocd.service: 1.1 OK 🙂"
            let rating = output.split(separator: "\n")
                .first { $0.contains("Overall exposure level for aklocd.service:") }
                .flatMap { line in
                    line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
                }
            return (code, output, rating)
        }

        @Test func unitsVerifyAndRateAtMostTwo() throws {
            guard ServiceTools.require() else { return }
            // The real binary, so verify also checks that ExecStart= can run.
            let result = try Self.checkUnits(aklocd: Binaries.aklocd)
            #expect(result.code == 0, "\(result.output)")
            let rating = try #require(result.rating, "no rating in:\n\(result.output)")
            #expect(rating <= Self.maximumExposure)
            print("systemd-analyze security --offline=yes aklocd.service: \(rating)")
        }

        /// `make install` into a DESTDIR with the binaries this test run built
        /// (INSTALL_BIN_DIR, so no release build), twice.
        static func makeInstall(destination: String, prefix: String? = nil) throws -> (Int32?, String) {
            var arguments = [
                "-C", Binaries.packageRoot.path, "install", "DESTDIR=\(destination)",
                "INSTALL_BIN_DIR=\(Binaries.directory.path)", "SWIFT=false",
            ]
            if let prefix { arguments.append("PREFIX=\(prefix)") }
            // Not the variables of a `make test` this may run under.
            let make = try TestProcess(
                "make", arguments, environment: ["MAKEFLAGS": "", "MAKELEVEL": "", "MFLAGS": ""])
            let code = make.waitForExit(timeout: 60)
            return (code, make.stdout() + make.stderr())
        }

        /// data/*, which `make install` copies to $(PREFIX)/share/akloc.
        static var dataFiles: [String] {
            let data = Binaries.packageRoot.appendingPathComponent("data").path
            return (FileManager.default.enumerator(atPath: data)?.allObjects as? [String] ?? []).filter { path in
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: "\(data)/\(path)", isDirectory: &isDirectory)
                    && !isDirectory.boolValue
            }
        }

        /// dbus/*.conf, which `make install` puts in $(DBUSPOLICYDIR).
        static var dbusPolicies: [String] {
            let dbus = Binaries.packageRoot.appendingPathComponent("dbus").path
            return ((try? FileManager.default.contentsOfDirectory(atPath: dbus)) ?? []).filter { $0.hasSuffix(".conf") }
        }

        @Test func makeInstallPutsEverythingUnderDestdirAndKeepsAnExistingConfig() throws {
            guard ServiceTools.require() else { return }
            let scratch = try ScratchDirectory()
            let root = scratch.path("root")
            let (code, output) = try Self.makeInstall(destination: root)
            #expect(code == 0, "\(output)")

            let fileManager = FileManager.default
            let expected: [(String, Int)] =
                [
                    ("usr/local/bin/aklocd", 0o755), ("usr/local/bin/akloc", 0o755),
                    ("usr/local/lib/systemd/system/aklocd.service", 0o644),
                    ("usr/local/lib/systemd/system/akloc.socket", 0o644),
                    ("usr/local/lib/sysusers.d/akloc.conf", 0o644), ("usr/local/lib/tmpfiles.d/akloc.conf", 0o644),
                    ("etc/akloc/akloc.conf", 0o644), ("usr/local/share/man/man1/akloc.1", 0o644),
                    ("usr/local/share/man/man5/akloc.conf.5", 0o644), ("usr/local/share/man/man8/aklocd.8", 0o644),
                ] + Self.dataFiles.map { ("usr/local/share/akloc/\($0)", 0o644) }
                + Self.dbusPolicies.map { ("etc/dbus-1/system.d/\($0)", 0o644) }
            for (path, mode) in expected {
                let attributes = try? fileManager.attributesOfItem(atPath: "\(root)/\(path)")
                #expect((attributes?[.posixPermissions] as? Int) == mode, "\(path): \(attributes ?? [:])")
            }
            let everything = fileManager.enumerator(atPath: root)?.allObjects as? [String] ?? []
            let files = everything.filter { path in
                var isDirectory: ObjCBool = false
                return fileManager.fileExists(atPath: "\(root)/\(path)", isDirectory: &isDirectory)
                    && !isDirectory.boolValue
            }
            #expect(Set(files) == Set(expected.map(\.0)), "nothing else: \(files.sorted())")

            let unit = try String(
                contentsOfFile: "\(root)/usr/local/lib/systemd/system/aklocd.service", encoding: .utf8)
            #expect(unit.split(separator: "\n").contains("ExecStart=/usr/local/bin/aklocd"))
            let config = fileManager.contents(atPath: "\(root)/etc/akloc/akloc.conf")
            #expect(
                config
                    == fileManager.contents(
                        atPath: Binaries.packageRoot.appendingPathComponent("config/akloc.conf").path))

            // The installed programs run, and accept the installed config.
            let check = try TestProcess(
                "\(root)/usr/local/bin/aklocd", ["--check-config", "--config", "\(root)/etc/akloc/akloc.conf"])
            #expect(check.waitForExit(timeout: 10) == 0, "\(check.stderr())")
            let help = try TestProcess("\(root)/usr/local/bin/akloc", ["--help"])
            #expect(help.waitForExit(timeout: 10) == 0, "\(help.stderr())")

            // The installed units pass the same checks as the repository's.
            let units = try Self.checkUnits(
                "\(root)/usr/local/lib/systemd/system", aklocd: "\(root)/usr/local/bin/aklocd")
            #expect(units.code == 0, "\(units.output)")
            #expect(units.rating.map { $0 <= Self.maximumExposure } == true, "\(units.output)")

            // Again, over an edited config: the administrator's file stays.
            let edited = "[gpsd]\nport = 2948\n"
            try edited.write(toFile: "\(root)/etc/akloc/akloc.conf", atomically: true, encoding: .utf8)
            let (again, againOutput) = try Self.makeInstall(destination: root)
            #expect(again == 0, "\(againOutput)")
            #expect(try String(contentsOfFile: "\(root)/etc/akloc/akloc.conf", encoding: .utf8) == edited)
            #expect(againOutput.contains("kept the existing \(root)/etc/akloc/akloc.conf"), "\(againOutput)")
        }

        @Test func prefixUsrInstallsWhereAPackageWould() throws {
            guard ServiceTools.require() else { return }
            let scratch = try ScratchDirectory()
            let root = scratch.path("root")
            let (code, output) = try Self.makeInstall(destination: root, prefix: "/usr")
            #expect(code == 0, "\(output)")
            let unit = try String(contentsOfFile: "\(root)/usr/lib/systemd/system/aklocd.service", encoding: .utf8)
            #expect(unit.split(separator: "\n").contains("ExecStart=/usr/bin/aklocd"))
            for path in ["usr/bin/aklocd", "usr/lib/sysusers.d/akloc.conf", "usr/lib/tmpfiles.d/akloc.conf"] {
                #expect(FileManager.default.fileExists(atPath: "\(root)/\(path)"), "\(path)")
            }
        }
    }
}
