import AklocTestSupport
import Foundation
import Testing

/// `akloc-bench --quick` (what `make bench-quick` runs): the benchmark harness
/// starts real gpsd through gpsfake, aklocd, the floor and its reader, and
/// writes a report. Checks that it runs and reports every section, never the
/// numbers (DESIGN §7: benchmarks are never timed tests).
@Suite(.serialized, .enabled(if: GPSDTools.shouldRun, "skipped: \(GPSDTools.missingMessage)"))
struct BenchHarnessTests {
    @Test func quickModeWritesEverySection() throws {
        guard GPSDTools.available else {
            Issue.record("AKLOC_REQUIRE_TOOLS=1 and \(GPSDTools.missingMessage)")
            return
        }
        let output = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-bench-\(UUID().uuidString.prefix(8)).md").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let bench = try TestProcess(
            Binaries.directory.appendingPathComponent("akloc-bench").path, ["--quick", "--out", output])
        defer { bench.kill() }
        let status = bench.waitForExit(timeout: 120)
        #expect(status == 0, "akloc-bench --quick: \(bench.stderr())")
        let report = try String(contentsOfFile: output, encoding: .utf8)
        for section in ["## Targets", "## Fan-out latency", "## Memory", "## Wake-ups, start-up, engine"] {
            #expect(report.contains(section), "missing \(section)")
        }
        for row in ["| 1 | ", "| 8 | "] {
            #expect(report.contains(row), "no latency row \(row)")
        }
        #expect(report.contains("exec to READY=1, median of 2"))
        #expect(report.contains("engine decisions/s"))
        #expect(!report.contains("| 8 | — |"), "no akloc subscriber received a fix")
        // The one-subscriber peak is read after DESIGN §7's lookups, on the repository's data.
        let lookups = report.split(separator: "\n").first { $0.hasPrefix("The geo lookups at N=1 answered: ") }
        #expect(lookups != nil && !lookups!.contains("answered: failed"), "\(lookups ?? "no geo lookups line")")
    }
}
