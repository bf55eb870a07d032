import AklocCore
import AklocGPSD
import AklocProtocol

extension Daemon {
    /// The `status` reply. A client that may not have locations now (not
    /// authorized, or whenInUse without an active session) sees no fix.
    func status(for client: ClientConnection) -> DaemonStatus {
        let snapshot = engine.snapshot
        let now = SystemClock.monotonicNow()
        var fix: DaemonStatus.Fix?
        let allowed = engine.mayReceiveLocations(client.id)
        if allowed, let location = snapshot.lastFix {
            fix = DaemonStatus.Fix(
                location: location, ageSeconds: age(of: location, receivedAt: snapshot.lastFixAt, now: now))
        }
        return DaemonStatus(
            state: snapshot.state, paused: snapshot.paused, uptimeSeconds: now.seconds(since: startedAt),
            source: DaemonStatus.Source(
                name: source?.status.name ?? configuration.gpsd.sourceName, connected: snapshot.source != nil),
            fix: fix,
            // The forwarder is an engine subscriber but not a client.
            clients: DaemonStatus.Clients(
                connected: snapshot.clients - (forwarderID == nil ? 0 : 1),
                updating: snapshot.updating - (forwarderID == nil ? 0 : 1), observing: snapshot.observing),
            counters: reportedCounters(snapshot.counters), mqtt: forwarderStatus)
    }

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
        let current = SystemClock.wallNow()
        return Double(current.secondsSince1970 - wall.secondsSince1970)
            + Double(current.nanoseconds - wall.nanoseconds) / 1e9
    }

    /// systemd's STATUS= line, in words: "3D fix, 4 clients".
    func serviceStatusLine() -> String {
        let snapshot = engine.snapshot
        let clients = snapshot.clients == 1 ? "1 client" : "\(snapshot.clients) clients"
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
