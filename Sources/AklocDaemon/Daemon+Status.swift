import AklocCore
import AklocGPSD
import AklocPosix
import AklocProtocol

extension Daemon {
    /// The `status` reply. A client that may not have locations now (not
    /// authorized, or whenInUse without an active session) sees no fix.
    func status(for client: ClientConnection) -> DaemonStatus {
        let snapshot = engine.snapshot
        let now = clock.now()
        var fix: DaemonStatus.Fix?
        let allowed = engine.mayReceiveLocations(client.id)
        if allowed, let location = snapshot.lastFix {
            fix = DaemonStatus.Fix(
                location: location, ageSeconds: age(of: location, receivedAt: snapshot.lastFixAt, now: now))
        }
        var status = DaemonStatus(
            state: snapshot.state, paused: snapshot.paused, uptimeSeconds: now.seconds(since: lifecycle.startedAt),
            source: DaemonStatus.Source(
                name: source.current?.sourceName ?? settings.configuration.gpsd.sourceName,
                connected: snapshot.source != nil),
            fix: fix,
            // Features' engine subscribers are not clients.
            clients: DaemonStatus.Clients(
                connected: snapshot.clients - internalSubscribers,
                updating: snapshot.updating - internalSubscribers, observing: snapshot.observing),
            counters: reportedCounters(snapshot.counters))
        features.report(into: &status)
        return status
    }

    /// The features' engine subscribers (the host's table), each updating
    /// from the moment it connects.
    private var internalSubscribers: Int { features.daemonSubscriberCount }

    /// `status` counters, each from its one owner: fixes and deliveries from
    /// the engine, the rest from the shell.
    func reportedCounters(_ engine: Engine.Counters) -> DaemonStatus.Counters {
        DaemonStatus.Counters(
            fixesReceived: engine.epochs, deliveries: engine.deliveries, eventsCoalesced: counters.eventsCoalesced,
            clientsDropped: counters.clientsDropped, badRequests: counters.badRequests,
            linesTooLong: counters.linesTooLong, connectionsAccepted: counters.connectionsAccepted,
            requests: counters.requests, sourceDisconnects: counters.sourceDisconnects, tpvsReceived: engine.fixes)
    }

    /// Seconds since the fix arrived: from the monotonic receipt when it came
    /// in this run, else (a fix restored from the state file) from its wall-clock receipt.
    func age(of location: Location, receivedAt: Instant?, now: Instant) -> Double {
        if let receivedAt { return now.seconds(since: receivedAt) }
        guard let wall = location.receivedAt else { return 0 }
        let current = clock.wallNow()
        return Double(current.secondsSince1970 - wall.secondsSince1970)
            + Double(current.nanoseconds - wall.nanoseconds) / 1e9
    }

    /// systemd's STATUS= line, in words: "3D fix, 4 clients".
    func serviceStatusLine() -> String {
        let snapshot = engine.snapshot
        let count = snapshot.clients - internalSubscribers
        let clients = count == 1 ? "1 client" : "\(count) clients"
        let state: String
        switch snapshot.state {
        case .paused: state = "paused"
        case .sourceUnavailable: state = "waiting for gpsd"
        case .searching: state = "searching for a fix"
        case .running: state = snapshot.lastFix?.mode == .threeD ? "3D fix" : "2D fix"
        }
        return "\(state), \(clients)"
    }
}
