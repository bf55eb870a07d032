import Foundation

/// The fleet section of BENCHMARKS.md (`make bench-fleet`). It sits between
/// two markers, so a fleet run replaces only its own section and `make bench`
/// keeps whatever fleet section the file already had.
struct FleetReport {
    static let begin = "<!-- akloc-bench fleet: begin -->"
    static let end = "<!-- akloc-bench fleet: end -->"

    var result: Fleet.Result
    var options: Options
    var machine: Machine

    /// The fleet section of `text` (or the one between other markers, such
    /// as the geo lookups'), markers included, if it has one.
    static func section(of text: String, begin: String = begin, end: String = end) -> String? {
        guard let start = text.range(of: begin), let stop = text.range(of: end, range: start.upperBound..<text.endIndex)
        else { return nil }
        return String(text[start.lowerBound..<stop.upperBound])
    }

    /// `text` with its fleet section (or the one between other markers)
    /// replaced by `section`, or `section` appended.
    static func splice(_ section: String, into text: String, begin: String = begin, end: String = end) -> String {
        if let old = FleetReport.section(of: text, begin: begin, end: end), let range = text.range(of: old) {
            return text.replacingCharacters(in: range, with: section)
        }
        let body = text.hasSuffix("\n") || text.isEmpty ? text : text + "\n"
        return body + (body.isEmpty ? "" : "\n") + section + "\n"
    }

    private static func median(_ values: [Int]) -> Int {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    private static func mb(_ kib: Int) -> String { String(format: "%.1f", Double(kib) * 1024 / 1e6) }

    func markdown() -> String {
        let r = result
        let s = r.settings
        let date = ISO8601DateFormatter().string(from: Date())
        let capture = URL(fileURLWithPath: options.log).lastPathComponent
        let perPss = r.started > 0 ? r.peakPssKiB / r.started : 0
        let perRss = r.started > 0 ? r.peakRssKiB / r.started : 0
        let fit = perPss > 0 ? r.memAvailableStartKiB / perPss : 0
        let untimed = zip(r.untimedPerReplay, r.daemonsPerReplay).reduce(0) { $0 + $1.0 * $1.1 }
        let lines = min(Fleet.lineCount(options.log), s.lines ?? Int.max)
        let replaySeconds = Double(lines) * options.cycle
        let epochRate =
            replaySeconds > 0 && !r.epochsPerReplay.isEmpty
            ? String(format: "about %.1f epochs/s", Double(r.epochsPerReplay.max() ?? 0) / replaySeconds) : "epochs"
        var out: [String] = [FleetReport.begin, "## Fleet (`make bench-fleet`)", ""]
        out.append(
            "Written by `akloc-bench --fleet` on \(date); the run took \(Int(r.seconds)) s. "
                + "Command: `\(options.command.isEmpty ? "akloc-bench --fleet \(s.instances)" : options.command)`, "
                + "aklocd `\(options.aklocd)`. Machine: \(machine.cores) cores, \(machine.memoryMiB) MiB. "
                + "Load average (1/5/15 min) at start: \(r.loadStart); at the end: \(r.loadEnd) "
                + "(the end's is mostly the fleet's own: its daemons, gpsds, broker and reader on "
                + "\(machine.cores) cores).")
        out.append("")
        out.append(
            "\(r.started) aklocd instances (of \(s.instances) asked), each its own OwnTracks device "
                + "(`[mqtt]` with `min-interval = 0`, `max-interval = 0`: every epoch), QoS 1 into \(r.broker), "
                + "read the whole time by one `mosquitto_sub` (QoS 1, persistent session"
                + (s.broker == .nats ? ", on node n1: what the other nodes take in crosses the cluster" : "")
                + "). \(r.replays) gpsfake replays of `\(capture)`"
                + " (" + (s.lines == nil ? "" : "its first \(lines) lines of \(Fleet.lineCount(options.log)), ")
                + "`-c \(options.cycle)`: a sentence every \(options.cycle) s, \(epochRate)), \(s.perReplay) daemons "
                + "and one `gpspipe` on each gpsd; "
                + "gpsfake waits \(Int(s.window)) s before feeding so every daemon is watching from the first epoch.")
        out.append("")
        out.append("| Measure | Result |")
        out.append("|---|---|")
        let percent = r.expected > 0 ? Double(r.arrived) / Double(r.expected) * 100 : 0
        let missing = r.incomplete.reduce(0) { $0 + $1.1 }
        out.append(
            "| fixes arrived / expected | **\(r.arrived) / \(r.expected)** (\(String(format: "%.2f", percent)) %); "
                + "\(r.devicesComplete) of \(r.started) devices got every epoch; **\(missing) missing**, "
                + "**\(r.duplicates) duplicates** |")
        out.append(
            "| expected per device | the epochs with a position (TPV mode ≥ 2, whole seconds = `tst`) its gpsd sent "
                + "the `gpspipe` beside it: \(Set(r.epochsPerReplay).sorted().map(String.init).joined(separator: ", ")) per replay"
                + (r.checkEpochs.map { " (the capture's .chk, gpsd's expected output: \($0))" } ?? "") + " |"
        )
        out.append(
            "| also received | \(r.duplicates) QoS 1 redeliveries (a payload again), \(r.sameEpoch) second locations "
                + "for an epoch already published (same `tst`, other payload); \(r.unexpected) locations whose `tst` is "
                + "no reference epoch, for the \(untimed) TPVs with a position but no time the replays began with "
                + "(\(Set(r.untimedPerReplay).sorted().map(String.init).joined(separator: ", ")) per replay, before gpsd knows "
                + "the date: aklocd stamps them with its own clock, docs/mqtt.md; not counted as expected) |")
        out.append(
            "| time for the last fixes to arrive after the last replay ended | \(String(format: "%.1f", r.drainSeconds)) s "
                + "(bound \(Int(s.drain)) s) |")
        out.append(
            "| fleet memory, peak of \(r.samples) samples (`/proc/PID/smaps_rollup`, every \(Int(s.sampleEvery)) s) | "
                + "PSS sum **\(Report.mib(r.peakPssKiB)) MiB** (\(Report.mib(perPss)) MiB = \(FleetReport.mb(perPss)) MB per instance); "
                + "RSS sum \(Report.mib(r.peakRssKiB)) MiB (\(Report.mib(perRss)) MiB per instance) |")
        out.append(
            "| per instance at the end (`/proc/PID/status`, smaps_rollup) | VmHWM median \(Report.mib(FleetReport.median(r.peakHWMKiB))) MiB, "
                + "max \(Report.mib(r.peakHWMKiB.max() ?? 0)) MiB; private (clean + dirty) median "
                + "\(Report.mib(FleetReport.median(r.privateKiB))) MiB |")
        out.append(
            "| CPU per instance per epoch | \(String(format: "%.2f", r.cpuMillisPerEpoch)) ms (all threads, start-up included, "
                + "÷ the replay's epochs) |")
        for node in r.brokerNodes {
            out.append(
                "| \(node.name), peak of the samples (smaps_rollup) | PSS **\(Report.mib(node.peakPssKiB)) MiB**, "
                    + "RSS \(Report.mib(node.peakRssKiB)) MiB; VmHWM at the end \(Report.mib(node.hwmKiB)) MiB; "
                    + "CPU \(String(format: "%.1f", node.cpuSeconds)) s over the run |")
        }
        if r.brokerNodes.count > 1 {
            out.append(
                "| broker nodes together | PSS \(Report.mib(r.brokerNodes.reduce(0) { $0 + $1.peakPssKiB })) MiB, "
                    + "RSS \(Report.mib(r.brokerNodes.reduce(0) { $0 + $1.peakRssKiB })) MiB (sums of each node's peak) |"
            )
        }
        out.append(
            "| the rest | mosquitto_sub VmHWM \(Report.mib(r.subscriberPeakKiB)) MiB, "
                + "gpsd VmHWM \(r.gpsdPeakKiB.map(Report.mib).joined(separator: ", ")) MiB |")
        out.append(
            "| start-up, per replay of \(s.perReplay) | \(r.startupSeconds.map { String(format: "%.1f", $0) }.joined(separator: ", ")) s "
                + "from the first spawn to the last socket serving |")
        out.append(
            "| memory available | \(Report.mib(r.memAvailableStartKiB)) MiB at the start, lowest \(Report.mib(r.memAvailableLowestKiB)) MiB "
                + "during the run: at \(Report.mib(perPss)) MiB PSS each, about \(fit) instances would fit in memory; the 2 cores "
                + "run out first |")
        out.append(
            "| clean-up | \(r.leftoverProcesses) processes, \(r.leftoverSegments) gpsd shm segments and "
                + "\(r.leftoverDirectories) temporary folders left after the run (checked after the stop) |")
        if !r.incomplete.isEmpty {
            out.append("")
            out.append(
                "Devices missing epochs (\(r.incomplete.count)): "
                    + r.incomplete.prefix(10).map { "\($0.0) \($0.1) of \($0.2)" }.joined(separator: ", ")
                    + (r.incomplete.count > 10 ? ", …" : "") + ".")
        }
        if !r.examples.isEmpty {
            out.append("")
            out.append("Examples of what the subscriber got beyond one location per expected epoch:")
            out.append("")
            out += r.examples.map { "- `\($0)`" }
        }
        if !r.notes.isEmpty {
            out.append("")
            out += r.notes.map { "- \($0)" }
        }
        out.append("")
        out.append(
            "PSS (proportional set size) divides each shared page among the processes mapping it, so the PSS sum is "
                + "the memory the fleet takes from the machine; the RSS sum counts libswiftCore, libdispatch, libgps, "
                + "libmosquitto and libc once per instance. The run is bounded (start-up window, replay, drain) and kills "
                + "every process it started by PID (the broker nodes too), removes the gpsd shm segments of its ports "
                + "and its temporary folders. `make bench-fleet FLEET_BROKER=mosquitto` runs the same fleet into one "
                + "mosquitto instead.")
        out.append(FleetReport.end)
        return out.joined(separator: "\n")
    }
}
