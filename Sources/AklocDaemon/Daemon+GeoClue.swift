import AklocCore
import AklocGeoClue
import AklocPosix

extension Daemon {
    /// `[geoclue]`: the GeoClue2 front on the system bus, and the NMEA feed.
    func startDesktop() throws(ComponentError) {
        let settings = configuration.geoclue
        let logger = logger
        if settings.enabled {
            let front = GeoClueFront(queue: queue) { level, message in logger.log(level, message, [:]) }
            var handlers = GeoClueService.Handlers()
            handlers.start = { [weak self] request in
                self?.assumeIsolated { $0.startGeoClueClient(request) } ?? .denied("aklocd is stopping")
            }
            handlers.stop = { [weak self] client in self?.assumeIsolated { $0.stopGeoClueClient(client) } }
            handlers.policyChanged = { [weak self] client, policy in
                self?.assumeIsolated { $0.updateGeoClueClient(client, policy) }
            }
            front.service.handlers = handlers
            geoClue = front
            try components.append(front)
        }
        if let path = settings.nmeaSocket {
            let feed = NMEAFeed(path: path, mode: settings.nmeaSocketMode, queue: queue) { level, message in
                logger.log(level, message, ["AKLOC_NMEA": path])
            }
            feed.readersChanged = { [weak self] anyone in self?.assumeIsolated { $0.nmeaReadersChanged(anyone) } }
            nmeaFeed = feed
            try components.append(feed)
        }
    }

    /// A D-Bus client's Start: its uid through akloc's rules, then one more
    /// engine subscriber with the client's thresholds as its policy.
    private func startGeoClueClient(_ request: GeoClueService.StartRequest) -> GeoClueService.Decision {
        guard let geoClue else { return .denied("aklocd is stopping") }
        let status = geoClueStatus(uid: request.uid, gid: request.gid)
        guard status.allowsLocation else {
            return .denied("uid \(request.uid) may not get locations ([authorization] in akloc.conf)")
        }
        let id = server.reserveID()
        geoClue.add(client: request.client, GeoClueFront.Subscriber(id: id, uid: request.uid, gid: request.gid))
        sessions.clientArrived(uid: request.uid)
        run(
            .connect(
                id,
                Engine.Peer(
                    uid: request.uid, authorization: status, sessionActive: sessions.isActive(uid: request.uid))))
        startUpdating(id, policy: request.policy, everyEpoch: false)
        log(
            .info, "GeoClue client \(request.client) (\(request.desktopID)) of uid \(request.uid) started",
            ["AKLOC_CLIENT_UID": "\(request.uid)"])
        return .started
    }

    /// A D-Bus peer has no `requestAuthorization`: a uid without a rule or a
    /// stored answer gets what `[authorization] default` would grant it,
    /// without storing it (GeoClue would ask its agent here).
    private func geoClueStatus(uid: UInt32, gid: UInt32) -> AuthorizationStatus {
        let identity = identity(uid: uid, gid: gid)
        let status = authorizer.status(for: identity, decisions: engine.persistentState.authorizationDecisions)
        guard status == .notDetermined else { return status }
        switch authorizer.defaultGrant {
        case .always: return .authorizedAlways
        case .whenInUse: return .authorizedWhenInUse
        case nil: return .denied
        }
    }

    private func stopGeoClueClient(_ client: UInt32) {
        guard let subscriber = geoClue?.remove(client: client) else { return }
        sessions.clientLeft(uid: subscriber.uid)
        run(.disconnect(subscriber.id))
    }

    private func updateGeoClueClient(_ client: UInt32, _ policy: ThrottlePolicy) {
        guard let subscriber = geoClue?.subscribers[client] else { return }
        startUpdating(subscriber.id, policy: policy, everyEpoch: false)
    }

    /// Starts (or re-policies) a subscriber of the daemon's own; the engine's
    /// reply has no pending request, so `perform` drops it.
    private func startUpdating(_ id: SubscriberID, policy: ThrottlePolicy?, everyEpoch: Bool) {
        let token = nextToken
        nextToken += 1
        run(.request(id, token, .startUpdatingLocation(policy: policy, everyEpoch: everyEpoch)))
    }

    /// The NMEA feed is an engine subscriber (root-equivalent, as the
    /// administrator configured it) while anyone reads it, taking every
    /// epoch, so gpsd can idle the receiver when nobody does.
    private func nmeaReadersChanged(_ anyone: Bool) {
        if anyone, nmeaID == nil {
            let id = server.reserveID()
            nmeaID = id
            run(.connect(id, Engine.Peer(uid: 0, authorization: .authorizedAlways)))
            startUpdating(id, policy: nil, everyEpoch: true)
        } else if !anyone, let id = nmeaID {
            nmeaID = nil
            run(.disconnect(id))
        }
    }

    /// The desktop side's share of one engine output (`perform`).
    func routeDesktop(_ ids: [SubscriberID], _ event: Engine.Event) {
        guard case .didUpdateLocation(let location, _) = event else { return }
        if let nmeaID, let nmeaFeed, ids.contains(nmeaID) { nmeaFeed.write(location) }
        guard let geoClue, !geoClue.clients.isEmpty else { return }
        for id in ids {
            if let client = geoClue.clients[id] { geoClue.service.deliver(location, to: client) }
        }
    }

    /// A reload re-decides every started D-Bus client's authorization, as
    /// for socket clients (the engine stops a denied one's fixes at once).
    func reauthorizeGeoClue(previous: Configuration) {
        if let geoClue {
            for subscriber in geoClue.subscribers.values.sorted(by: { $0.id < $1.id }) {
                let status = geoClueStatus(uid: subscriber.uid, gid: subscriber.gid)
                if status != engine.authorizationStatus(of: subscriber.id) {
                    run(.authorizationChanged(subscriber.id, status))
                }
            }
        }
        if configuration.geoclue != previous.geoclue {
            log(.notice, "[geoclue] applies at the next restart; the GeoClue front and NMEA feed keep theirs")
        }
    }
}
