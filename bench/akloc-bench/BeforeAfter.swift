import Foundation

/// Issue 19's targets, this run beside the run before the work (BENCHMARKS.md
/// of commit 57c6a90, 2026-11-30, load 0.89 / 0.20 at its start and end).
/// The ratios are each run's own: aklocd against the floor or gpsd measured
/// in the same run, so a loaded machine moves both sides.
extension Report {
    struct Before {
        var peakKiB: [Int: Int]
        var cpuMillis: (akloc: Double, floor: Double)
        /// aklocd, floor and gpsd p99 (ms) by N.
        var p99: [Int: (akloc: Double, floor: Double, gpsd: Double)]
    }

    static let before = Before(
        peakKiB: [1: Int(24.2 * 1024), 64: Int(24.4 * 1024), 1_000: Int(25.4 * 1024), 10_000: Int(35.9 * 1024)],
        cpuMillis: (2.400, 0.971),
        p99: [
            1: (0.456, 0.319, 0.387), 64: (0.989, 0.868, 0.984), 1_000: (4.188, 3.478, 2.659),
            10_000: (29.120, 30.942, 5.113),
        ])

    private static func megabytes(_ kib: Int) -> String {
        String(format: "%.1f MiB (%.1f MB)", Double(kib) / 1024, Double(kib) * 1024 / 1e6)
    }

    private static func times(_ value: Double) -> String { String(format: "%.2f×", value) }

    private func verdictOf(_ met: Bool?) -> String {
        switch met {
        case .some(true): "met"
        case .some(false): "**missed**"
        case .none: "not measured"
        }
    }

    /// One p99 row: aklocd against its reference (ms before, ns after) and the ratio, met when ≤ `limit`.
    private func p99Line(
        _ label: String, before: (Double, Double)?, after: (Int64, Int64)?, limit: Double
    ) -> String {
        let oldText = before.map { String(format: "%.3f vs %.3f ms: ", $0.0, $0.1) + Report.times($0.0 / $0.1) } ?? "—"
        var ratio: Double?
        var newText = "—"
        if let (akloc, reference) = after, reference > 0 {
            ratio = Double(akloc) / Double(reference)
            newText = "\(Report.ms(akloc)) vs \(Report.ms(reference)) ms: \(Report.times(ratio ?? 0))"
        }
        return "| \(label) | \(oldText) | \(newText) | \(verdictOf(ratio.map { $0 <= limit })) |"
    }

    func beforeAndAfter() -> [String] {
        var lines = [
            "## Issue 19: before and after",
            "",
            "Before: `make bench` at commit 57c6a90 (the previous BENCHMARKS.md, load 0.89 at its start). "
                + "After: this run. Ratios are against the floor (or gpsd) of the same run. "
                + "\"MB\" in the targets is read as 10⁶ bytes, the stricter reading; the tables below are in MiB.",
            "",
            "| Target | Before (57c6a90) | After (this run) | Verdict |",
            "|---|---|---|---|",
        ]
        let before = Report.before
        func row(_ count: Int) -> LatencyRow? { rows.first { $0.subscribers == count } }
        for (count, limitBytes) in [(1, 10_000_000.0), (10_000, 40_000_000.0)] {
            let after = row(count).map(\.aklocPeakKiB)
            let met = after.map { Double($0) * 1024 <= limitBytes }
            let label =
                count == 1
                ? "aklocd peak RSS (VmHWM) ≤ 10 MB with 1 subscriber, after a `reverseGeocode` and a "
                    + "`countries` lookup (DESIGN §7; before: without the geo data)"
                : "aklocd peak RSS (VmHWM) ≤ 40 MB at 10 000 subscribers"
            let pss =
                row(count).map {
                    ", PSS \(Report.mib($0.aklocPssKiB)) MiB; "
                        + ($0.geoLookups.hasPrefix("failed")
                            ? "geo lookups \($0.geoLookups)"
                            : "\(Report.megabytes($0.aklocPeakBeforeLookupsKiB)) before the lookups")
                } ?? ""
            lines.append(
                "| \(label) | \(before.peakKiB[count].map(Report.megabytes) ?? "—") | "
                    + "\(after.map(Report.megabytes) ?? "—")\(pss) | \(verdictOf(met)) |")
        }
        let cpuAfter: Double? =
            if let one = row(1), let akloc = one.aklocCPUMillis, let floor = one.floorCPUMillis, floor > 0 {
                akloc / floor
            } else { nil }
        let cpuAfterText =
            if let one = row(1), let akloc = one.aklocCPUMillis, let floor = one.floorCPUMillis, let ratio = cpuAfter {
                String(format: "%.3f vs %.3f ms: ", akloc, floor) + Report.times(ratio)
            } else { "—" }
        lines.append(
            "| CPU per epoch with 1 subscriber ≤ 1.5× the floor | "
                + String(format: "%.3f vs %.3f ms: ", before.cpuMillis.akloc, before.cpuMillis.floor)
                + Report.times(before.cpuMillis.akloc / before.cpuMillis.floor) + " | \(cpuAfterText) | "
                + "\(verdictOf(cpuAfter.map { $0 <= 1.5 })) |")
        for count in rows.map(\.subscribers) {
            lines.append(
                p99Line(
                    "added latency p99 ≤ 1.2× the floor at \(count)",
                    before: before.p99[count].map { ($0.akloc, $0.floor) },
                    after: row(count).flatMap { r in r.akloc.flatMap { a in r.floor.map { (a.p99, $0.p99) } } },
                    limit: 1.2))
        }
        for count in [1, 64] where row(count) != nil {
            lines.append(
                p99Line(
                    "added latency p99 at \(count) no worse than gpsd's own direct clients",
                    before: before.p99[count].map { ($0.akloc, $0.gpsd) },
                    after: row(count).flatMap { r in r.akloc.flatMap { a in r.gpsd.map { (a.p99, $0.p99) } } }, limit: 1
                ))
        }
        lines.append("")
        return lines
    }
}
