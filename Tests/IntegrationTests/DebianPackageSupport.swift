import AklocTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the Debian package tests drive (issue 17): the programs, how to run
/// one to the end, and the GPSDTools rule for a missing one (skip, or fail
/// under `AKLOC_REQUIRE_TOOLS=1`).
enum DebianPackage {
    /// For the manual pages: scdoc renders them, man-db checks them.
    static let manualTools = ["scdoc", "man"]
    /// For the package: `make deb` (dpkg-buildpackage, debhelper), lintian,
    /// apt-get and the checks on what it installed.
    static let packageTools =
        manualTools + [
            "make", "dpkg-buildpackage", "dh", "lintian", "apt-get", "dpkg-query", "ldd", "systemd-analyze",
            "setpriv",
        ]

    static func missing(_ tools: [String]) -> [String] {
        tools.filter { TestProcess.which($0) == nil }
    }

    static func shouldRun(_ tools: [String]) -> Bool { missing(tools).isEmpty || GPSDTools.required }

    static func missingMessage(_ tools: [String]) -> String {
        "missing \(missing(tools).joined(separator: ", ")) (`make deps` installs them: DEB_BUILD_PACKAGES)"
    }

    /// Records a failure (and returns false) when a required tool is missing.
    static func require(_ tools: [String]) -> Bool {
        let absent = missing(tools)
        guard absent.isEmpty else {
            Issue.record("AKLOC_REQUIRE_TOOLS=1 and \(missingMessage(tools))")
            return false
        }
        return true
    }

    struct Run {
        var code: Int32?
        var stdout: String
        var stderr: String
        var output: String { stdout + stderr }
    }

    /// Runs a program to its end (killed at `timeout`).
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: Double = 60
    ) throws -> Run {
        let process = try TestProcess(executable, arguments, environment: environment)
        defer { process.kill() }
        let code = process.waitForExit(timeout: timeout)
        return Run(code: code, stdout: process.stdout(), stderr: process.stderr())
    }

    /// `man --warnings` on one page: what groff and man-db complain about
    /// (empty for a clean page), and the rendered text.
    static func manWarnings(_ page: String) throws -> (code: Int32?, warnings: String, text: String) {
        let result = try run(
            "man", ["--warnings", "-E", "UTF-8", "-l", page],
            environment: ["LC_ALL": "C.UTF-8", "MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"])
        return (result.code, result.stderr, result.stdout)
    }

    /// The text between the line `heading` and the next heading of the same
    /// or a higher level in an scdoc source (`# NAME`, `## akloc watch`).
    static func section(_ heading: String, in source: String) -> String? {
        let level = heading.prefix { $0 == "#" }.count
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == heading || $0.hasPrefix(heading + " ") }) else {
            return nil
        }
        var end = lines.index(after: start)
        while end < lines.endIndex {
            let hashes = lines[end].prefix { $0 == "#" }.count
            if hashes > 0, hashes <= level, lines[end].dropFirst(hashes).first == " " { break }
            end = lines.index(after: end)
        }
        return lines[lines.index(after: start)..<end].joined(separator: "\n")
    }

    /// The scdoc sources, by page (`akloc.1`, `aklocd.8`, `akloc.conf.5`).
    static let pages = ["akloc.1", "aklocd.8", "akloc.conf.5"]

    static func source(_ page: String) throws -> String {
        try String(
            contentsOf: Binaries.packageRoot.appendingPathComponent("man/\(page).scd"), encoding: .utf8)
    }
}
