import AklocCore
import AklocPosix
import AklocSystemd
import Dispatch
import Glibc

extension Daemon {
    /// Serves the socket (systemd's, or one it binds), installs the signal
    /// handlers and the engine timer, connects to gpsd, then says READY=1
    /// once the signal sources are registered. In-process tests pass
    /// `handlingSignals: false`, so the test runner keeps its own SIGTERM,
    /// SIGINT and SIGHUP (and READY=1 is said at once).
    func start(activatedFD: Int32?, handlingSignals: Bool = true) throws(ComponentError) {
        if let activatedFD {
            server.listening = .activated(activatedFD)
            settings.activated = true
        }
        features.daemon = self
        service.statusLine = { [weak self] in self?.assumeIsolated { $0.serviceStatusLine() } ?? "" }
        lifecycle.engineTimer = clock.makeTimer { [weak self] in self?.assumeIsolated { $0.run(.tick) } }

        // Not SIG_IGN first: on Linux libdispatch installs its own handler
        // when it registers a signal source, and until then an ignored
        // SIGTERM would be lost (systemd would wait for TimeoutStopSec) where
        // the default action at least stops the daemon.
        let signals = handlingSignals ? [(SIGTERM, SignalAction.stop), (SIGINT, .stop), (SIGHUP, .reload)] : []
        var unregistered = signals.count
        for (signalNumber, action) in signals {
            let signalSource = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            signalSource.setEventHandler { [weak self] in self?.assumeIsolated { $0.received(action) } }
            // Registration is asynchronous: READY=1 waits for it, so a stop
            // or reload systemd sends after READY=1 is always handled.
            signalSource.setRegistrationHandler { [weak self] in
                unregistered -= 1
                if unregistered == 0 { self?.assumeIsolated { $0.service.ready() } }
            }
            signalSource.activate()
            lifecycle.signalSources.append(signalSource)
        }
        try? Signal.pipe.setDisposition(.ignore)

        attachServer()
        sessions.onChange = { [weak self] changes in
            self?.assumeIsolated { daemon in
                for change in changes { daemon.run(.sessionChanged(uid: change.uid, active: change.active)) }
            }
        }
        // Started in this order, stopped in reverse: clients need the
        // session monitor, fixes need clients to go to.
        components = ComponentGroup([sessions, server]) { [logger] error in logger.log(.error, "\(error)", [:]) }
        try components.start()
        try startSource()
        for feature in features.plug(settings.configuration) { try components.append(feature) }
        switch server.listening {
        case .activated: log(.notice, "serving the socket systemd passed")
        case .path(let path, _): log(.notice, "serving \(path)")
        case .none: log(.notice, "serving in-memory clients")
        }
        if signals.isEmpty { service.ready() }
    }

    enum SignalAction: Sendable {
        case stop
        case reload
    }

    func received(_ action: SignalAction) {
        switch action {
        case .stop: stop()
        case .reload: reload()
        }
    }

    /// SIGTERM/SIGINT: clients hear `daemonStopping`, state is flushed, exit 0.
    func stop() {
        guard !lifecycle.stopping else { return }
        shutDown()
        exit(0)
    }

    /// Everything `stop` does but exit (in-process tests end a daemon with it).
    func shutDown() {
        guard !lifecycle.stopping else { return }
        lifecycle.stopping = true
        service.stopping()
        log(.notice, "lifecycle.stopping")
        run(.stopping)
        persistState()
        components.stop()
        source.current = nil
        lifecycle.engineTimer?.cancel()
        persistence.timer?.cancel()
        for signalSource in lifecycle.signalSources { signalSource.cancel() }
    }
}
