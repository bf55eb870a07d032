import AklocCore
import AklocPosix
import AklocSystemd

/// What systemd hears of the daemon (sd_notify): READY=1 once the socket is
/// served, RELOADING=1 around a reload, STATUS= in words, WATCHDOG=1 while
/// systemd asks for it, STOPPING=1. Its timers are the injected clock's, so
/// an embedded daemon runs them on virtual time.
///
/// Confinement: the daemon's queue.
final class ServiceReporter {
    private let notifier: SystemdNotifier
    private let clock: any ShellClock
    private let log: (LogLevel, String) -> Void
    /// The STATUS= line now ("3D fix, 4 clients"); the daemon's to say.
    var statusLine: () -> String = { "" }
    private var lastStatus = ""
    private var statusPending = false
    private var statusTimer: (any ShellTimer)?
    private var watchdogTimer: (any ShellTimer)?

    init(
        notifier: SystemdNotifier = SystemdNotifier(), clock: any ShellClock, log: @escaping (LogLevel, String) -> Void
    ) {
        self.notifier = notifier
        self.clock = clock
        self.log = log
    }

    /// READY=1, then the watchdog if systemd asked for one.
    func ready() {
        notify { try notifier.ready() }
        statusChanged()
        guard let interval = notifier.watchdogInterval, watchdogTimer == nil else { return }
        let (seconds, attoseconds) = interval.components
        let period = Double(seconds) + Double(attoseconds) / 1e18
        let timer = clock.makeTimer { [weak self] in self?.watchdog(every: period) }
        watchdogTimer = timer
        timer.schedule(at: clock.now(), leeway: 0.1)
        log(.info, "watchdog every \(interval)")
    }

    private func watchdog(every period: Double) {
        notify { try notifier.watchdog() }
        watchdogTimer?.schedule(after: period, on: clock, leeway: 0.1)
    }

    /// Keeps STATUS= current. The line costs O(clients), so after a change
    /// it is taken once 200 ms later, not once per step (10 000 clients
    /// connecting would otherwise cost 10 000 lines).
    func statusChanged() {
        guard notifier.isEnabled, !statusPending else { return }
        statusPending = true
        if statusTimer == nil { statusTimer = clock.makeTimer { [weak self] in self?.sendStatus() } }
        statusTimer?.schedule(after: 0.2, on: clock, leeway: 0.05)
    }

    private func sendStatus() {
        statusPending = false
        let line = statusLine()
        guard line != lastStatus else { return }
        lastStatus = line
        notify { try notifier.status(line) }
    }

    func reloading() { notify { try notifier.reloading() } }

    func readyAgain() { notify { try notifier.ready() } }

    func stopping() {
        notify { try notifier.stopping() }
        statusTimer?.cancel()
        watchdogTimer?.cancel()
    }

    private func notify(_ body: () throws -> Void) {
        do {
            try body()
        } catch {
            log(.warning, "sd_notify failed: \(error)")
        }
    }
}
