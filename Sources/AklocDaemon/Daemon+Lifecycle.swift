import AklocCore
import AklocGPSD
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
        service.statusLine = { [weak self] in self?.assumeIsolated { $0.statusReport.serviceLine } ?? "" }
        lifecycle.engineTimer = clock.makeTimer { [weak self] in self?.assumeIsolated { $0.run(.tick) } }
        if persistence.store != nil {
            persistence.timer = clock.makeTimer { [weak self] in
                self?.assumeIsolated { daemon in
                    if daemon.persistence.isPending { daemon.persistState() }
                }
            }
        }

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
        _ = source.remove()
        lifecycle.engineTimer?.cancel()
        persistence.timer?.cancel()
        for signalSource in lifecycle.signalSources { signalSource.cancel() }
    }

    /// Connects to gpsd; the source reconnects by itself from then on.
    func startSource() throws(ComponentError) {
        let started = source.make(for: settings, watching: engine.snapshot.watching) { [weak self] event in
            self?.onQueue(event) { daemon, event in daemon.sourceEvent(event) }
        }
        try components.append(started)
    }

    /// A reload changed where fixes come from: drops the old connection
    /// (clients hear `sourceDisconnected` if it was up) and starts the new one.
    func replaceSource() {
        let old = source.current?.sourceName ?? "none"
        if let removed = source.remove() { components.remove(removed) }
        run(.sourceDisconnected)
        do {
            try startSource()
        } catch {
            log(.error, "cannot start the new source: \(error)")
        }
        log(.notice, "gpsd source changed from \(old) to \(source.current?.sourceName ?? "none")")
    }

    func sourceEvent(_ event: GPSDSource.Event) {
        switch event {
        case .fix(let location):
            run(.fix(location))
        case .noFix(let device):
            run(.noFix(device: device))
        case .sky(let sky):
            run(.sky(sky))
        case .connected(let name):
            log(.notice, "connected to \(name)", ["AKLOC_SOURCE": name])
            run(.sourceConnected(name: name))
        case .disconnected(let reason):
            counters.sourceDisconnects += 1
            // The source has logged why; this records what clients are told.
            log(.info, "clients told the source is gone (\(reason))", ["AKLOC_SOURCE": source.name(settings)])
            run(.sourceDisconnected)
        }
    }

    /// Writes the durable state (paused flag, last location, authorization
    /// decisions). A failed write is logged and the daemon keeps serving:
    /// losing state across a restart beats refusing locations now.
    func persistState() {
        if let failure = persistence.save(engine.persistentState, at: clock.now()) {
            log(.error, "cannot save state to \(failure.path): \(failure)")
        }
    }
}
