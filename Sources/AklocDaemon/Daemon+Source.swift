import AklocCore
import AklocGPSD
import AklocPosix
import AklocSystemd

extension Daemon {
    /// Where fixes come from: `--gpsd` when given, else `[gpsd]` host and port.
    var sourceEndpoint: GPSDEndpoint {
        if let text = settings.options.gpsd {
            // Validated by `DaemonMain` before the daemon starts.
            return (try? GPSDEndpoint(parsing: text)) ?? GPSDEndpoint()
        }
        return GPSDEndpoint(host: settings.configuration.gpsd.host, port: settings.configuration.gpsd.port)
    }

    /// Connects to gpsd; the source reconnects by itself from then on.
    func startSource() throws(ComponentError) {
        let source = self.source.make(sourceEndpoint, settings.configuration.gpsd.device)
        source.onEvent = { [weak self] event in
            self?.onQueue(event) { daemon, event in daemon.sourceEvent(event) }
        }
        self.source.current = source
        source.setWatch(engine.snapshot.watching)
        try components.append(source)
    }

    /// A reload changed where fixes come from: drops the old connection
    /// (clients hear `sourceDisconnected` if it was up) and starts the new one.
    func replaceSource() {
        let old = source.current?.sourceName ?? "none"
        if let current = source.current {
            current.onEvent = nil
            components.remove(current)
        }
        source.current = nil
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
        case .connected(let name):
            log(.notice, "connected to \(name)", ["AKLOC_SOURCE": name])
            run(.sourceConnected(name: name))
        case .disconnected(let reason):
            counters.sourceDisconnects += 1
            // The source has logged why; this records what clients are told.
            log(
                .info, "clients told the source is gone (\(reason))", ["AKLOC_SOURCE": source.current?.sourceName ?? ""]
            )
            run(.sourceDisconnected)
        }
    }
}
