import AklocCore
import AklocPosix
import AklocProtocol

/// What `status` and systemd's STATUS= line say, from one engine snapshot
/// and the shell's counters: fixes and deliveries from the engine, the rest
/// from the shell, each from its one owner.
struct StatusReport {
    let snapshot: Engine.Snapshot
    let counters: ShellCounters
    let now: Instant
    let wallNow: FixTime
    let startedAt: Instant
    let sourceName: String
    /// The features' engine subscribers (the router's table), each updating
    /// from the moment it connects; they are not clients.
    let internalSubscribers: Int

    /// The `status` reply, before the features add theirs. A client that
    /// may not have locations now (not authorized, or whenInUse without an
    /// active session) sees no fix.
    func status(showingFix allowed: Bool) -> DaemonStatus {
        var fix: DaemonStatus.Fix?
        if allowed, let location = snapshot.lastFix {
            fix = DaemonStatus.Fix(location: location, ageSeconds: age(of: location))
        }
        return DaemonStatus(
            state: snapshot.state, paused: snapshot.paused, uptimeSeconds: now.seconds(since: startedAt),
            source: DaemonStatus.Source(name: sourceName, connected: snapshot.source != nil),
            fix: fix,
            clients: DaemonStatus.Clients(
                connected: snapshot.clients - internalSubscribers,
                updating: snapshot.updating - internalSubscribers, observing: snapshot.observing),
            counters: DaemonStatus.Counters(
                fixesReceived: snapshot.counters.epochs, deliveries: snapshot.counters.deliveries,
                eventsCoalesced: counters.eventsCoalesced, clientsDropped: counters.clientsDropped,
                badRequests: counters.badRequests, linesTooLong: counters.linesTooLong,
                connectionsAccepted: counters.connectionsAccepted, requests: counters.requests,
                sourceDisconnects: counters.sourceDisconnects, tpvsReceived: snapshot.counters.fixes))
    }

    /// Seconds since the fix arrived: from the monotonic receipt when it came
    /// in this run, else (a fix restored from the state file) from its wall-clock receipt.
    func age(of location: Location) -> Double {
        if let receivedAt = snapshot.lastFixAt { return now.seconds(since: receivedAt) }
        guard let wall = location.receivedAt else { return 0 }
        return Double(wallNow.secondsSince1970 - wall.secondsSince1970)
            + Double(wallNow.nanoseconds - wall.nanoseconds) / 1e9
    }

    /// systemd's STATUS= line, in words: "3D fix, 4 clients".
    var serviceLine: String {
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
