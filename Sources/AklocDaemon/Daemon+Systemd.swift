import AklocCore
import AklocSystemd
import Dispatch

extension Daemon {
    /// READY=1 once the socket is served, then the watchdog if systemd asked for one.
    func serviceReady() {
        notify { try notifier.ready() }
        updateServiceStatus()
        guard let interval = notifier.watchdogInterval else { return }
        let watchdog = DispatchSource.makeTimerSource(queue: queue)
        let (seconds, attoseconds) = interval.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        watchdog.schedule(deadline: .now(), repeating: .nanoseconds(nanoseconds), leeway: .milliseconds(100))
        watchdog.setEventHandler { [weak self] in
            self?.assumeIsolated { daemon in daemon.notify { try daemon.notifier.watchdog() } }
        }
        watchdog.activate()
        watchdogTimer = watchdog
        log(.info, "watchdog every \(interval)")
    }

    /// Keeps STATUS= current. The snapshot costs O(clients), so after an
    /// engine step it is taken once 200 ms later, not once per step (10 000
    /// clients connecting would otherwise cost 10 000 snapshots).
    func updateServiceStatus() {
        guard notifier.isEnabled, !serviceStatusPending else { return }
        serviceStatusPending = true
        if serviceStatusTimer == nil {
            serviceStatusTimer = clock.makeTimer { [weak self] in
                self?.assumeIsolated { daemon in
                    daemon.serviceStatusPending = false
                    let line = daemon.serviceStatusLine()
                    guard line != daemon.lastServiceStatus else { return }
                    daemon.lastServiceStatus = line
                    daemon.notify { try daemon.notifier.status(line) }
                }
            }
        }
        serviceStatusTimer?.schedule(at: clock.now().advanced(bySeconds: 0.2), leeway: 0.05)
    }

    func serviceStopping() {
        notify { try notifier.stopping() }
    }

    func notify(_ body: () throws -> Void) {
        do {
            try body()
        } catch {
            log(.warning, "sd_notify failed: \(error)")
        }
    }
}
