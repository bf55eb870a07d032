import AklocCore
import AklocPosix
import AklocProtocol

extension Daemon {
    /// Connects the client server's handlers to the daemon: who a client
    /// is, its `hello`, its requests, and the engine told when it leaves.
    func attachServer() {
        server.handlers = ClientServer.Handlers(
            identify: { [weak self] credentials in
                self?.assumeIsolated { daemon in
                    let identity = daemon.identity(uid: credentials.uid, gid: credentials.gid)
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

    /// Who a peer is, as far as the authorizer needs to know: names and groups
    /// from NSS, except for the uids it decides by number (root).
    func identity(uid: UInt32, gid: UInt32) -> Authorizer.Identity {
        guard Authorizer.needsNames(uid) else { return Authorizer.Identity(uid: uid, userName: nil, groupNames: []) }
        return settings.users.identity(uid: uid, gid: gid)
    }

    /// What akloc's rules give a uid that cannot ask (a feature's user peer,
    /// such as a D-Bus client): a uid without a rule or a stored answer gets
    /// what `[authorization] default` would grant it, without storing it
    /// (GeoClue would ask its agent here).
    func grantedStatus(uid: UInt32, gid: UInt32) -> AuthorizationStatus {
        let status = settings.authorizer.status(
            for: identity(uid: uid, gid: gid), decisions: engine.persistentState.authorizationDecisions)
        guard status == .notDetermined else { return status }
        switch settings.authorizer.defaultGrant {
        case .always: return .authorizedAlways
        case .whenInUse: return .authorizedWhenInUse
        case nil: return .denied
        }
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
                    uid: credentials.uid, authorization: status, sessionActive: sessions.isActive(uid: credentials.uid))
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
}
