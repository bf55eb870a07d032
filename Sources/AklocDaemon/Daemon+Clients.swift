import AklocCore
import AklocFeature
import AklocPosix
import AklocProtocol

/// The daemon's side of its clients: who they are, their requests routed
/// to the engine, a feature or the daemon's own answer, and the engine told
/// when they leave.
extension Daemon {
    /// Connects the client server's handlers to the daemon.
    func attachServer() {
        server.handlers = ClientServer.Handlers(
            identify: { [weak self] credentials in
                self?.assumeIsolated { daemon in
                    let identity = daemon.settings.identity(uid: credentials.uid, gid: credentials.gid)
                    return (identity, daemon.settings.authorizer.isAdmin(identity))
                } ?? (Authorizer.Identity(uid: credentials.uid, userName: nil, groupNames: []), false)
            },
            admitted: { [weak self] id in self?.assumeIsolated { $0.admitted(id) } },
            line: { [weak self] line, id in
                self?.assumeIsolated { daemon in
                    daemon.counters.requests += 1
                    guard let client = daemon.server.clients[id] else { return }
                    daemon.handle(line: line, from: client)
                }
            },
            lineTooLong: { [weak self] _ in
                self?.assumeIsolated { daemon in
                    daemon.counters.badRequests += 1
                    daemon.counters.linesTooLong += 1
                }
            },
            dropped: { [weak self] _ in self?.assumeIsolated { $0.counters.clientsDropped += 1 } },
            gone: { [weak self] id, credentials in self?.assumeIsolated { $0.clientGone(id, credentials) } })
    }

    /// For a feature's user peer (FeatureRouter): what the rules grant a uid.
    func grantedStatus(uid: UInt32, gid: UInt32) -> AuthorizationStatus {
        settings.grantedStatus(uid: uid, gid: gid, decisions: engine.persistentState.authorizationDecisions)
    }

    /// A new client: its `hello` (with its authorization), then the engine.
    func admitted(_ id: SubscriberID) {
        guard let client = server.clients[id] else { return }
        let credentials = client.credentials
        counters.connectionsAccepted += 1
        let status = settings.authorizer.status(
            for: client.identity, decisions: engine.persistentState.authorizationDecisions)
        sessions.clientArrived(uid: credentials.uid)
        log(
            .debug, "client \(id) connected",
            ["AKLOC_CLIENT_UID": "\(credentials.uid)", "AKLOC_CLIENT_PID": "\(credentials.pid)"])
        if let departure = deliver(ServerEncoder.hello(authorizationStatus: status), to: client) {
            depart(id, departure)
            return
        }
        run(
            .connect(
                id,
                Engine.Peer(
                    uid: credentials.uid, authorization: status, sessionActive: sessions.isActive(uid: credentials.uid),
                    isAdmin: client.isAdmin)
            ))
    }

    /// The client went away (or had to): forget its requests, tell the engine.
    private func clientGone(_ id: SubscriberID, _ credentials: UnixStreamSocket.Credentials) {
        inFlight.requests = inFlight.requests.filter { $0.value.client != id }
        features.clientGone(id)
        sessions.clientLeft(uid: credentials.uid)
        run(.disconnect(id))
    }

    func disconnect(_ id: SubscriberID, reason: String?) {
        server.disconnect(id, reason: reason)
    }

    /// One request line: decode, check the right to make it, then answer it
    /// here (status, reload, authorize), or hand it to a feature or the engine.
    func handle(line: [UInt8], from client: ClientConnection) {
        let request: ClientRequest
        switch ClientRequest.decode(line) {
        case .success(let decoded):
            request = decoded
        case .failure(let error):
            counters.badRequests += 1
            if let departure = deliver(ServerEncoder.reply(id: error.id, error: error), to: client) {
                depart(client.id, departure)
            }
            return
        }
        switch request.operation {
        case .engine(let engineRequest):
            if request.operation.isAdmin, !client.isAdmin { return refuse(request, client) }
            if let refusal = features.refusal(of: engineRequest) {
                return answer(request, client, ServerEncoder.reply(id: request.id, error: refusal))
            }
            let token = inFlight.token()
            inFlight.requests[token] = (client.id, request.id)
            run(.request(client.id, token, engineRequest))
        case .status:
            answer(request, client, ServerEncoder.reply(id: request.id, status: status(for: client)))
        case .reload:
            guard client.isAdmin else { return refuse(request, client) }
            answer(request, client, replyTo(request, reload()))
        case .authorize(let subject, let rule):
            guard client.isAdmin else { return refuse(request, client) }
            answer(request, client, replyTo(request, authorize(subject: subject, rule: rule)))
        case .track, .clearTrack, .importTrack, .visits, .trips, .places, .geo:
            if request.operation.isAdmin, !client.isAdmin { return refuse(request, client) }
            let asker = FeatureClient(
                id: client.id, uid: client.credentials.uid, gid: client.credentials.gid, isAdmin: client.isAdmin,
                replyBudget: settings.configuration.socket.clientHardLimit / 2)
            switch features.answer(request.operation, id: request.id, from: asker) {
            case .success(let reply):
                answer(request, client, reply)
            case .failure(let error):
                if error.code == .badRequest { counters.badRequests += 1 }
                answer(request, client, ServerEncoder.reply(id: request.id, error: error))
            case nil:
                let error = ProtocolError(.unavailable, "\(request.operation.name) is served by no running feature")
                answer(request, client, ServerEncoder.reply(id: request.id, error: error))
            }
        }
    }

    /// The `status` reply: the daemon's report, then each feature's.
    func status(for client: ClientConnection) -> DaemonStatus {
        var status = statusReport.status(showingFix: engine.mayReceiveLocations(client.id))
        features.report(into: &status)
        return status
    }

    var statusReport: StatusReport {
        StatusReport(
            snapshot: engine.snapshot, counters: counters, now: clock.now(), wallNow: clock.wallNow(),
            startedAt: lifecycle.startedAt, sourceName: source.name(settings),
            internalSubscribers: features.daemonSubscriberCount)
    }

    private func refuse(_ request: ClientRequest, _ client: ClientConnection) {
        answer(
            request, client,
            ServerEncoder.reply(
                id: request.id,
                error: ProtocolError(
                    .forbidden,
                    "\(request.operation.name) needs root or membership of the \(settings.configuration.authorization.adminGroup) group"
                )))
    }

    /// Answers a pending engine request with an error instead of the engine's reply.
    func refuse(_ token: RequestToken, of subscriber: SubscriberID, _ error: ProtocolError) {
        guard let request = inFlight.requests.removeValue(forKey: token), request.client == subscriber,
            let client = server.clients[subscriber]
        else { return }
        log(.error, "\(error.message)")
        var refused = error
        refused.id = request.id
        if let departure = deliver(ServerEncoder.reply(id: request.id, error: refused), to: client) {
            depart(subscriber, departure)
        }
    }

    private func replyTo(_ request: ClientRequest, _ result: Result<Void, ProtocolError>) -> [UInt8] {
        switch result {
        case .success: ServerEncoder.replyDone(id: request.id)
        case .failure(let error): ServerEncoder.reply(id: request.id, error: error)
        }
    }

    func answer(_ request: ClientRequest, _ client: ClientConnection, _ bytes: [UInt8]) {
        if let departure = deliver(bytes, to: client) { depart(client.id, departure) }
    }
}
