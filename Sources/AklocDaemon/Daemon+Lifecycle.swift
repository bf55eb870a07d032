import AklocCore
import AklocSystemd
import Dispatch
import Glibc

extension Daemon {
    /// Serves the socket (systemd's, or one it binds), installs the signal
    /// handlers and the engine timer, connects to gpsd, then says READY=1
    /// once the signal sources are registered. In-process tests pass
    /// `handlingSignals: false`, so the test runner keeps its own SIGTERM,
    /// SIGINT and SIGHUP (and READY=1 is said at once).
    func start(activatedFD: Int32?, handlingSignals: Bool = true) throws(SocketError) {
        let listener: UnixSocket
        if let activatedFD {
            listener = UnixSocket.adopt(fd: activatedFD)
            activatedSocket = true
        } else {
            listener = try UnixSocket.listen(path: socketPath, mode: configuration.socket.mode)
        }
        self.listener = listener
        listenWatch = listener.descriptor.watch(.readable, on: queue) { [weak self] in
            self?.assumeIsolated { $0.acceptPending() }
        }

        timer.setEventHandler { [weak self] in self?.assumeIsolated { $0.run(.tick) } }
        timer.schedule(deadline: .distantFuture)
        timer.activate()

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
                if unregistered == 0 { self?.assumeIsolated { $0.serviceReady() } }
            }
            signalSource.activate()
            signalSources.append(signalSource)
        }
        signal(SIGPIPE, SIG_IGN)

        startSessionMonitor()
        startSource()
        startForwarder()
        log(.notice, "serving \(activatedSocket ? "the socket systemd passed" : socketPath)")
        if signals.isEmpty { serviceReady() }
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

    func startSessionMonitor() {
        if !sessions.tracksSessions {
            log(
                .notice,
                "no logind here (/run/systemd/users or /run/systemd/system is missing): "
                    + "every user counts as logged in, so whenInUse clients always get fixes")
            return
        }
        do {
            try sessions.start(on: queue) { [weak self] changes in
                self?.assumeIsolated { daemon in
                    for change in changes { daemon.run(.sessionChanged(uid: change.uid, active: change.active)) }
                }
            }
        } catch {
            log(
                .warning,
                "cannot watch login sessions (\(error)): whenInUse clients keep the session state they had when they connected"
            )
        }
    }

    /// SIGTERM/SIGINT: clients hear `daemonStopping`, state is flushed, exit 0.
    func stop() {
        guard !stopping else { return }
        shutDown()
        exit(0)
    }

    /// Everything `stop` does but exit (in-process tests end a daemon with it).
    func shutDown() {
        guard !stopping else { return }
        stopping = true
        serviceStopping()
        log(.notice, "stopping")
        run(.stopping)
        persistState()
        // One last non-blocking flush each: a client that cannot take it now
        // would only delay the exit that systemd is waiting for.
        for client in clients.values {
            _ = client.flush()
            client.close()
        }
        clients.removeAll()
        source?.stop()
        forwarder?.stop()
        sessions.stop()
        timer.cancel()
        watchdogTimer?.cancel()
        for signalSource in signalSources { signalSource.cancel() }
        acceptSuspended = false
        listener?.close()
        if !activatedSocket { unlink(socketPath) }
    }
}
