import Foundation

#if canImport(Glibc)
    import Glibc
#endif

struct Machine {
    var cores: Int
    var memoryMiB: Int
    var kernel: String
    var cpu: String
    var load: String

    static func current() -> Machine {
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let machine = withUnsafeBytes(of: &name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
        return Machine(
            cores: sysconf(Int32(_SC_NPROCESSORS_ONLN)),
            memoryMiB: (Posix.procStatus("/proc/meminfo")["MemTotal"] ?? 0) / 1024,
            kernel: "Linux \(release) \(machine)", cpu: model ?? "unknown", load: loadAverage())
    }

    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }
}

/// BENCHMARKS.md, written from one run's numbers.
struct Report {
    var options: Options
    var machine: Machine
    var loadAfter: String
    var fileLimit: UInt64
    var rows: [LatencyRow]
    var wakeups: WakeupResult
    var ready: ReadyResult
    var engine: EngineBench.Result
    var seconds: Double

    static func ms(_ nanos: Int64) -> String { String(format: "%.3f", Double(nanos) / 1e6) }

    static func triple(_ stats: Stats?) -> String {
        guard let stats else { return "—" }
        return "\(ms(stats.p50)) / \(ms(stats.p99)) / \(ms(stats.max))"
    }

    static func ratio(_ lhs: Int64?, _ rhs: Int64?) -> String {
        guard let lhs, let rhs else { return "—" }
        guard rhs > 0 else { return "n/a" }
        return String(format: "%.1f×", Double(lhs) / Double(rhs))
    }

    static func pair(_ stats: Stats?) -> String {
        guard let stats else { return "—" }
        return "\(ms(stats.p50)) / \(ms(stats.p99))"
    }

    static func millis(_ value: Double?) -> String { value.map { String(format: "%.3f", $0) } ?? "—" }

    static func mib(_ kib: Int) -> String { String(format: "%.1f", Double(kib) / 1024) }

    static func summary(_ row: LatencyRow) -> String {
        "N=\(row.subscribers): akloc \(triple(row.akloc)) ms (\(row.aklocReceived)/\(row.aklocExpected)), "
            + "from the same fix \(triple(row.aklocSameFix)) ms (split \(pair(row.splitTime))), "
            + "gpsd \(triple(row.gpsd)) ms (\(row.gpsdAccepted) of \(row.gpsdAttempted) accepted), "
            + "floor \(triple(row.floor)) ms, reader lag \(pair(row.aklocReaderLag)); \(pair(row.floorReaderLag)), CPU/epoch akloc \(millis(row.aklocCPUMillis)) floor \(millis(row.floorCPUMillis)) "
            + "gpsd \(millis(row.gpsdCPUMillis)) ms, aklocd peak \(mib(row.aklocPeakKiB)) MiB (\(mib(row.aklocPeakBeforeLookupsKiB)) before the geo lookups), setup \(String(format: "%.1f", row.setupSeconds)) s"
    }

    private func verdict(_ met: Bool?) -> String {
        switch met {
        case .some(true): "met"
        case .some(false): "**missed**"
        case .none: "not measured"
        }
    }

    private func targets() -> [String] {
        var lines = ["| Target | Measured | Verdict |", "|---|---|---|"]
        for (count, limitMillis) in [(1_000, 1.0), (10_000, 20.0)] {
            let p99 = rows.first { $0.subscribers == count }?.akloc?.p99
            let measured = p99.map { "\(Report.ms($0)) ms" } ?? "—"
            let met = p99.map { Double($0) / 1e6 < limitMillis }
            var note = verdict(met)
            if let p99, met == false { note += String(format: " by %.3f ms", Double(p99) / 1e6 - limitMillis) }
            lines.append(
                "| added latency p99 < \(Int(limitMillis)) ms at \(count) subscribers | \(measured) | \(note) |")
        }
        let peak = rows.first { $0.subscribers == 10_000 }?.aklocPeakKiB
        var memoryNote = verdict(peak.map { $0 < 64 * 1024 })
        if let peak, peak >= 64 * 1024 { memoryNote += " by \(Report.mib(peak - 64 * 1024)) MiB" }
        lines.append(
            "| aklocd peak RSS < 64 MiB at 10 000 subscribers | \(peak.map { Report.mib($0) + " MiB" } ?? "—") | \(memoryNote) |"
        )
        lines.append(
            "| < 1 wake-up/s while paused | \(String(format: "%.2f", wakeups.pausedPerSecond))/s | \(verdict(wakeups.pausedPerSecond < 1)) |"
        )
        lines.append(
            "| exec to READY=1 < 100 ms (median) | \(String(format: "%.1f", ready.median)) ms | \(verdict(ready.median < 100)) |"
        )
        return lines
    }

    private func row(_ count: Int) -> LatencyRow? { rows.first { $0.subscribers == count } }

    private static func fmt(_ nanos: Int64?) -> String { nanos.map { "\(ms($0)) ms" } ?? "—" }

    /// Plain statements with this run's numbers: targets against the floor,
    /// akloc against gpsd, per-subscriber costs, memory growth.
    private func findings() -> [String] {
        var lines: [String] = []
        for (count, limit) in [(1_000, 1.0), (10_000, 20.0)] {
            guard let row = row(count), let akloc = row.akloc, let floor = row.floor else { continue }
            let floorMisses = Double(floor.p99) / 1e6 >= limit
            var line =
                "- p99 at \(count): aklocd \(Report.fmt(akloc.p99)), the floor \(Report.fmt(floor.p99)) "
                + "(target \(Int(limit)) ms). "
            if floorMisses {
                line +=
                    "The floor misses the target too, by \(String(format: "%.3f", Double(floor.p99) / 1e6 - limit)) ms: "
                    + "one send() and one wake-up per subscriber on 2 shared cores cost more than the target, "
                    + "whatever the daemon does. "
            }
            line +=
                "aklocd ÷ floor: p50 \(Report.ratio(akloc.p50, floor.p50)), p99 \(Report.ratio(akloc.p99, floor.p99))."
            lines.append(line)
        }
        for count in [1, 64] {
            guard let row = row(count), let akloc = row.akloc, let gpsd = row.gpsd else { continue }
            lines.append(
                "- At \(count) subscriber\(count == 1 ? "" : "s") aklocd adds p50 \(Report.fmt(akloc.p50)) / p99 \(Report.fmt(akloc.p99)), "
                    + "gpsd's own direct clients (\(row.gpsdAccepted) kept) p50 \(Report.fmt(gpsd.p50)) / p99 \(Report.fmt(gpsd.p99)), "
                    + "the floor p50 \(Report.fmt(row.floor?.p50)) / p99 \(Report.fmt(row.floor?.p99)).")
        }
        for row in rows {
            guard let sameFix = row.aklocSameFix, let split = row.splitTime, let floor = row.floor else {
                continue
            }
            lines.append(
                "- Epochs at \(row.subscribers): the TPV from which a direct gpsd client has every field of the fix "
                    + "aklocd delivers came p50 \(Report.fmt(split.p50)) / p99 \(Report.fmt(split.p99)) after the "
                    + "epoch's first TPV (the receiver's split); measured from that TPV, aklocd adds "
                    + "p50 \(Report.fmt(sameFix.p50)) / p99 \(Report.fmt(sameFix.p99)) "
                    + "(÷ floor p50 \(Report.ratio(sameFix.p50, floor.p50)), p99 \(Report.ratio(sameFix.p99, floor.p99)))."
            )
        }
        if let small = rows.first, let large = rows.last, large.subscribers > small.subscribers,
            let aklocSmall = small.aklocCPUMillis, let aklocLarge = large.aklocCPUMillis,
            let floorSmall = small.floorCPUMillis, let floorLarge = large.floorCPUMillis
        {
            let span = Double(large.subscribers - small.subscribers)
            lines.append(
                String(
                    format:
                        "- CPU: aklocd costs %.2f µs per subscriber per epoch (the floor %.2f µs) on top of a fixed "
                        + "%.2f ms per epoch (the floor %.2f ms). The fixed part is reading gpsd and handling every "
                        + "TPV: gpsd sends each object on its own (its .chk: 1468 TPV and 564 SKY in 147 epochs; "
                        + "more TPVs an epoch at this pacing), each waking the event loop and unpacked by libgps, and "
                        + "aklocd checks, converts and merges every TPV, where the floor's poll loop only scans the "
                        + "bytes. A libgps reader with the floor's fan-out costs 1 to 1.3 times what the floor does "
                        + "(bench/NOTES.md, \"Measured together\"): most of the difference is aklocd's own per-TPV "
                        + "path, a few cold-cache microseconds per TPV in each of its pieces.",
                    (aklocLarge - aklocSmall) * 1e3 / span, (floorLarge - floorSmall) * 1e3 / span, aklocSmall,
                    floorSmall))
        }
        if rows.count >= 3 {
            let perSubscriber = zip(rows, rows.dropFirst()).map { small, large in
                String(
                    format: "%.0f B from %d to %d",
                    Double(large.aklocPeakKiB - small.aklocPeakKiB) * 1024
                        / Double(large.subscribers - small.subscribers), small.subscribers, large.subscribers)
            }
            lines.append(
                "- Memory grows linearly: aklocd's peak per added subscriber is \(perSubscriber.joined(separator: ", ")) "
                    + "(the engine's subscriber, the connection with its file descriptor on the event loop, the outbound queue)."
            )
        }
        lines.append(
            String(
                format: "- Asleep: %.2f wake-ups/s paused and %.2f/s idle; READY after %.1f ms (median).",
                wakeups.pausedPerSecond, wakeups.idlePerSecond, ready.median))
        return lines
    }

    func markdown() -> String {
        var out: [String] = []
        let date = ISO8601DateFormatter().string(from: Date())
        out.append("# akloc benchmarks")
        out.append("")
        out.append(
            "Written by `akloc-bench` (bench/) on \(date)\(options.quick ? ", **quick mode: the numbers are not meaningful**" : ""). "
                + "Every number below comes from that one run, which took \(Int(seconds)) s.")
        out.append("")
        out.append("- Command: `\(options.command.isEmpty ? "akloc-bench" : options.command)`")
        out.append(
            "- Harness: `akloc-bench \(CommandLine.arguments.dropFirst().map { $0.contains(" ") ? "\"\($0)\"" : $0 }.joined(separator: " "))`, aklocd `\(options.aklocd)`"
        )
        out.append(
            "- Machine: \(machine.cores) cores (\(machine.cpu)), \(machine.memoryMiB) MiB memory, \(machine.kernel)")
        out.append(
            "- Load average (1/5/15 min) at start: \(machine.load); at the end: \(loadAfter). "
                + "The machine is shared: other load inflates every column alike.")
        out.append(
            "- Capture: `\(URL(fileURLWithPath: options.log).lastPathComponent)` replayed by gpsfake with `-c \(options.cycle)` "
                + "(epochs every \(rows.map { String(format: "%.0f", $0.epochIntervalMillis) }.joined(separator: "/")) ms on average "
                + "in the akloc phases); \(options.epochs) epochs measured per phase; "
                + "RLIMIT_NOFILE of the harness \(fileLimit), aklocd started with a soft limit of 1024.")
        out.append("")
        out.append("## Targets")
        out.append("")
        out += targets()
        out.append("")
        out += beforeAndAfter()
        out.append("## Findings (computed from this run)")
        out.append("")
        out += findings()
        if let notes = options.notes.flatMap({ try? String(contentsOfFile: $0, encoding: .utf8) }) {
            out.append("")
            out.append(notes.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        out.append("")
        out.append("## Fan-out latency added over a direct gpsd client (ms: p50 / p99 / max)")
        out.append("")
        out.append(
            "| N | akloc (aklocd) | gpsd, direct clients | floor | akloc ÷ gpsd p50 / p99 | akloc ÷ floor p50 / p99 "
                + "| received akloc / gpsd / floor | reader lag p50 / p99, akloc phase; floor phase |"
        )
        out.append("|---:|---|---|---|---|---|---|---|")
        for row in rows {
            let gpsdLabel =
                "\(Report.triple(row.gpsd)) (\(row.gpsdAccepted) kept, \(row.gpsdAttempted - row.gpsdAccepted) refused)"
            out.append(
                "| \(row.subscribers) | \(Report.triple(row.akloc)) | \(gpsdLabel) | \(Report.triple(row.floor)) | "
                    + "\(Report.ratio(row.akloc?.p50, row.gpsd?.p50)) / \(Report.ratio(row.akloc?.p99, row.gpsd?.p99)) | "
                    + "\(Report.ratio(row.akloc?.p50, row.floor?.p50)) / \(Report.ratio(row.akloc?.p99, row.floor?.p99)) | "
                    + "\(row.aklocReceived)/\(row.aklocExpected), \(row.gpsdReceived)/\(row.gpsdExpected), "
                    + "\(row.floorReceived)/\(row.floorExpected) | \(Report.pair(row.aklocReaderLag)); \(Report.pair(row.floorReaderLag)) |"
            )
        }
        out.append("")
        out.append("## Memory (peak resident, MiB)")
        out.append("")
        out.append(
            "| N | aklocd VmHWM | aklocd VmHWM before the geo lookups | aklocd VmRSS at the end "
                + "| aklocd PSS / private at the end | aklocd threads | gpsd VmHWM (its clients: ≤ 64) | floor VmHWM |"
        )
        out.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for row in rows {
            out.append(
                "| \(row.subscribers) | \(Report.mib(row.aklocPeakKiB)) | \(Report.mib(row.aklocPeakBeforeLookupsKiB)) | "
                    + "\(Report.mib(row.aklocResidentKiB)) | "
                    + "\(Report.mib(row.aklocPssKiB)) / \(Report.mib(row.aklocPrivateKiB)) | \(row.aklocThreads) | "
                    + "\(Report.mib(row.gpsdPeakKiB)) | \(Report.mib(row.floorPeakKiB)) |")
        }
        if let first = rows.first, let last = rows.last, last.subscribers > first.subscribers {
            let perSubscriber =
                Double(last.aklocPeakKiB - first.aklocPeakKiB) * 1024 / Double(last.subscribers - first.subscribers)
            out.append("")
            out.append(
                String(
                    format: "From N=%d to N=%d aklocd's peak grows by %.0f bytes per subscriber.",
                    first.subscribers, last.subscribers, perSubscriber))
        }
        if let first = rows.first {
            out.append("")
            out.append("The geo lookups at N=\(first.subscribers) answered: \(first.geoLookups).")
        }
        out.append("")
        out.append("## CPU per epoch while measuring (ms, all threads)")
        out.append("")
        out.append("| N | aklocd | floor | gpsd (serving its ≤ 64 clients and aklocd) | aklocd ÷ floor |")
        out.append("|---:|---:|---:|---:|---:|")
        for row in rows {
            let ratio =
                if let akloc = row.aklocCPUMillis, let floor = row.floorCPUMillis, floor > 0 {
                    String(format: "%.1f×", akloc / floor)
                } else { "—" }
            out.append(
                "| \(row.subscribers) | \(Report.millis(row.aklocCPUMillis)) | \(Report.millis(row.floorCPUMillis)) | "
                    + "\(Report.millis(row.gpsdCPUMillis)) | \(ratio) |")
        }
        out.append("")
        out.append("## Wake-ups, start-up, engine")
        out.append("")
        out.append("| Measure | Result |")
        out.append("|---|---|")
        out.append(
            String(
                format:
                    "| aklocd wake-ups while paused (%d subscribers) | %.2f/s (%d context switches in %.0f s; %d threads, %d started or ended) |",
                wakeups.pausedSubscribers, wakeups.pausedPerSecond, wakeups.pausedSwitches, wakeups.window,
                wakeups.pausedThreads, wakeups.pausedThreadChurn))
        out.append(
            String(
                format:
                    "| aklocd wake-ups idle, no subscribers | %.2f/s (%d context switches in %.0f s; %d threads, %d started or ended) |",
                wakeups.idlePerSecond, wakeups.idleSwitches, wakeups.window, wakeups.idleThreads,
                wakeups.idleThreadChurn))
        out.append(
            "| exec to READY=1, median of \(ready.samplesMillis.count) | \(String(format: "%.1f", ready.median)) ms "
                + "(all: \(ready.samplesMillis.map { String(format: "%.1f", $0) }.joined(separator: ", ")) ms) |")
        out.append(
            String(
                format:
                    "| engine decisions/s, %d subscribers (%d streams), %d fixes | %.2f million/s (%.1f ns per decision; per fix p50 %.0f µs, max %.0f µs; %d deliveries) |",
                engine.subscribers, engine.streams, engine.fixes, engine.decisionsPerSecond / 1e6,
                engine.seconds * 1e9 / Double(engine.decisions), engine.perFixMedianMicros, engine.perFixMaxMicros,
                engine.deliveries))
        let notes = rows.flatMap { row in row.notes.map { "- N=\(row.subscribers): \($0)" } }
        if !notes.isEmpty {
            out.append("")
            out.append("## Run notes")
            out.append("")
            out += notes
        }
        out.append("")
        out.append(Report.explanation)
        return out.joined(separator: "\n") + "\n"
    }

    static let explanation = """
        ## What each number means

        - **One reader.** One process (the harness) holds every client socket of a phase in one epoll
          set on one thread: the reference gpsd client, the direct gpsd clients, and the akloc or floor
          subscribers. Each return of `epoll_wait` is stamped once with CLOCK_MONOTONIC, and that stamp is
          the receive time of every line read in that batch. So all columns share one clock and one code
          path, and a line's time is when the reader learned it was there (its data arrived no later).
          The reader competes for the 2 cores with the program it measures, as any client would.
        - **Reference.** A direct gpsd client (`?WATCH={"json":true}`) that connects to gpsd before
          aklocd, the floor and the other clients, so gpsd writes to it first. An epoch is a fix time; its
          reference time is the kernel's receive time (SO_TIMESTAMPNS on the TCP socket, converted to
          CLOCK_MONOTONIC) of gpsd's first TPV of it on the reference socket. akloc events carry
          `location.timestamp`, gpsd's TPV `time` for that epoch, which matches them up.
        - **Added latency** of one subscriber for one epoch: the reader's receive time of its first line
          for that epoch minus the reference time. It includes the reader waking up, which a real
          subscriber pays too ("reader lag" is that cost for the reference itself: the reader's time
          minus the kernel's; AF_UNIX stream sockets have no kernel receive times). p50 / p99 / max over
          every (subscriber, epoch) pair of the measured epochs (those whose reference arrived after
          every subscriber was set up). akloc subscribers send `startUpdatingLocation` with
          `minInterval` 0 (every fix of the moving boat) and get `didUpdateLocation`. "received" counts
          (subscriber, epoch) pairs that arrived against the subscribers times the epochs; a shortfall
          means epochs without a fix (gpsd TPVs of mode < 2 are not delivered by akloc) or coalesced
          events.
        - **gpsd, direct clients.** N more gpsd clients in the same run as aklocd, measured the same way:
          gpsd's own fan-out. gpsd keeps at most 64 clients (MAX_CLIENTS) counting gpsfake's, aklocd's
          and the reference, and closes the others at once: "refused". From N = 64 up, gpsd's column is
          therefore its fan-out to the clients it kept, not to N.
        - **Floor.** `akloc-bench floor`, its own process: one gpsd client and a Unix socket server in
          one poll loop that, for the first TPV of each epoch, `write()`s gpsd's line as it came (already
          encoded, about the size of aklocd's event) to every connected subscriber, nothing else. It is measured in its own phase (its own gpsfake
          replay, the same reader and reference, and the same N direct gpsd clients beside it so the
          reader and gpsd carry the same load as in aklocd's phase) so it does not share the CPU with
          aklocd. It is the least any daemon in aklocd's place could add.
        - **Ratios.** akloc ÷ gpsd and akloc ÷ floor of p50 and p99 at the same N. A gpsd ratio at
          N ≥ 1 000 compares akloc's N subscribers with gpsd's ≤ 61.
        - **CPU per epoch.** On-CPU time of every thread of the process (`/proc/PID/task/*/schedstat`)
          while its epochs were measured, divided by the epochs the reference saw meanwhile: the work
          one fix costs the server, whatever the reader's speed.
        - **Memory.** VmHWM (peak resident set) and VmRSS of aklocd from `/proc/PID/status` at the end of
          its phase; each N starts a fresh aklocd, so the peak is that N's. aklocd has the repository's
          geo data (`[geo] data-dir`, `--data-dir`), and after its measured epochs the harness makes
          `akloc where`'s two calls, a `reverseGeocode` of the current fix and a `countries` lookup of its
          country (DESIGN §7), before it reads the peak; the peak just before them is beside it. The data
          files are dropped from the page cache before each aklocd starts (`posix_fadvise` DONTNEED), as
          after a boot where only aklocd reads them. gpsd's and the floor's peaks are there for scale.
        - **Wake-ups.** Voluntary plus involuntary context switches of every thread in
          `/proc/PID/task/*/status`, sampled every 100 ms over the window (a thread that appears counts
          all its switches, one that ends counts one more): one aklocd connected to gpsd with no
          subscribers (idle), one with subscribers after an admin `pause` (paused), side by side, both
          with `[track] enable = no` (the recorder, on by default, keeps aklocd watching gpsd).
        - **READY.** From just before `posix_spawn` of aklocd to the receipt of `READY=1` on a datagram
          socket the harness bound and passed as `NOTIFY_SOCKET`; aklocd's gpsd address is a port nothing
          listens on.
        - **Engine.** AklocCore's `Engine` driven directly in the harness process (release build, no I/O):
          subscribers with mixed policies (a fifth each: the defaults 5 s / 300 s; every fix; 1 s with a
          10 m distance filter; every fix with a 5 m accuracy filter; a `myLocation` observer at 2 s; every
          tenth also observes `rawLocation`), then every TPV with a position of the capture's `.chk` (gpsd's
          expected output), one second apart on a manual clock. A decision is one subscriber stream offered
          one fix.
        """
}
