import AklocTestSupport
import Foundation
import Testing

/// Issue 18: aklocd died with SIGSEGV in libdispatch's event loop under
/// client churn. The real daemon on a looping real gpsd replay, 200 steady
/// subscribers, and threads opening short connections as fast as they can.
/// `make test` runs it for 20 s; `make soak` for `SOAK_SECONDS` (the same
/// test, through `AKLOC_CHURN_SECONDS` and `AKLOC_CHURN_THREADS`).
@Suite(.serialized, .enabled(if: GPSDTools.shouldRun, "skipped: \(GPSDTools.missingMessage)"))
struct ChurnTests {
    static let seconds = Double(ProcessInfo.processInfo.environment["AKLOC_CHURN_SECONDS"] ?? "") ?? 20
    static let threads = Int(ProcessInfo.processInfo.environment["AKLOC_CHURN_THREADS"] ?? "") ?? 4
    /// One connection in this many waits up to 1.2 s for a late reply (0: none).
    static let longWaitOneIn = Int(ProcessInfo.processInfo.environment["AKLOC_CHURN_LONG_WAIT_ONE_IN"] ?? "") ?? 20
    /// The length of one measuring window: every steady subscriber must be fed in each.
    static let window = 5.0
    /// Sanitizer builds keep freed memory in quarantine, so their resident
    /// memory grows by design: `make soak-sanitizers` turns the check off.
    static let checksMemory = ProcessInfo.processInfo.environment["AKLOC_CHURN_CHECK_MEMORY"] != "0"

    @Test func daemonSurvivesChurnAndKeepsFeedingSteadySubscribers() throws {
        guard LiveReplay.requireTools() else { return }
        let fake = try GPSFake.start(log: LiveReplay.bundled("haicom-305N"), cycle: 0.02, loop: true)
        defer { fake.stop() }
        // The track recorder's day file opens with its first fix, after the
        // idle baseline below: this test counts the clients' descriptors.
        let daemon = try DaemonProcess(
            gpsdPort: fake.port, config: "[track]\nenable = no\n", extraArguments: ["--log-level", "info"])
        defer { daemon.stop() }
        let idleDescriptors = try #require(ChurnLoad.openDescriptors(daemon.process.pid))
        let load = ChurnLoad(
            socketPath: daemon.socketPath, steady: 200, threads: Self.threads, longWaitOneIn: Self.longWaitOneIn)
        try load.start()
        defer { load.stop() }

        let started = Date()
        var samples: [ChurnLoad.Sample] = []
        while true {
            let elapsed = Date().timeIntervalSince(started)
            if elapsed >= Self.seconds { break }
            // A measuring window, not a wait for something to happen.
            Thread.sleep(forTimeInterval: min(Self.window, Self.seconds - elapsed))
            let sample = load.sample(daemonPID: daemon.process.pid, elapsed: Date().timeIntervalSince(started))
            samples.append(sample)
            if !sample.daemonRunning { break }
        }
        load.stop()
        let report = samples.map {
            String(
                format: "%.0fs fed %d conns %d fds %d rss %d KiB", $0.elapsed, $0.fedSubscribers, $0.connections,
                $0.openDescriptors ?? -1, $0.residentKiB ?? -1)
        }
        print("churn (\(Self.threads) threads, \(Self.seconds) s):\n  " + report.joined(separator: "\n  "))

        let last = try #require(samples.last)
        #expect(
            last.daemonRunning,
            "aklocd died (exit \(daemon.process.exitCode.map(String.init) ?? "?")): \(daemon.process.stderr().suffix(2000))"
        )
        for sample in samples where sample.daemonRunning {
            #expect(sample.fedSubscribers == 200, "window ending at \(Int(sample.elapsed)) s: \(sample)")
        }
        // The load really churned: hundreds of connections a second are expected; a few dozen prove nothing.
        #expect(last.connections > Int(Self.seconds) * 50, "only \(last.connections) connections")
        // Memory levels off once the load is running: the second window is
        // the baseline, the last may not climb far past it.
        if Self.checksMemory, samples.count >= 3, let baseRSS = samples[1].residentKiB, let lastRSS = last.residentKiB {
            #expect(lastRSS <= baseRSS + baseRSS / 4 + 4096, "resident memory grew from \(baseRSS) to \(lastRSS) KiB")
        }
        // Every descriptor of every client that left is closed: once the
        // daemon has seen the last ones go, it is back to where it started.
        // (Bounded wait for the daemon to read the final end-of-files.)
        var leftOpen = ChurnLoad.openDescriptors(daemon.process.pid) ?? -1
        let settleBy = Date().addingTimeInterval(15)
        while leftOpen > idleDescriptors, Date() < settleBy {
            Thread.sleep(forTimeInterval: 0.05)
            leftOpen = ChurnLoad.openDescriptors(daemon.process.pid) ?? -1
        }
        #expect(leftOpen <= idleDescriptors, "\(leftOpen) descriptors open after the load, \(idleDescriptors) before")
        // Still serving a newcomer after all that.
        let (client, hello) = try daemon.connect()
        #expect(hello.event == "hello")
        #expect(try client.request("get", ["keyPath": "state"]).ok == true)
    }
}
