import AklocCore
import AklocGeo
import AklocProtocol

extension Daemon {
    /// The saved-place and region ops (DESIGN §9). Each is answered here, at
    /// once; a change is acknowledged only once it is on disk.
    func handle(_ request: PlacesRequest, id: RequestID?, from client: ClientConnection) {
        let result: Result<PlacesReply, ProtocolError>
        switch request {
        case .savePlace(let draft): result = savePlace(draft, for: client).map(PlacesReply.place)
        case .places: result = .success(.places(places.places.visible(to: client.credentials.uid)))
        case .deletePlace(let name): result = deletePlace(name, for: client).map { .done }
        case .startMonitoring(let names): result = startMonitoring(names, for: client).map(PlacesReply.names)
        case .stopMonitoring(let names): result = stopMonitoring(names, for: client).map(PlacesReply.names)
        }
        let bytes: [UInt8]
        switch result {
        case .success(let reply): bytes = ServerEncoder.reply(id: id, reply)
        case .failure(let error): bytes = ServerEncoder.reply(id: id, error: error)
        }
        if case .failure(let error) = result, error.code == .badRequest { counters.badRequests += 1 }
        if let departure = deliver(bytes, to: client) { depart(client.id, departure) }
    }

    private func savePlace(_ draft: PlaceDraft, for client: ClientConnection) -> Result<SavedPlace, ProtocolError> {
        if draft.shared, !client.isAdmin {
            return .failure(
                ProtocolError(
                    .forbidden,
                    "a shared place needs root or membership of the \(configuration.authorization.adminGroup) group"))
        }
        let coordinate: Coordinate
        if let latitude = draft.latitude, let longitude = draft.longitude {
            coordinate = Coordinate(latitude: latitude, longitude: longitude)
        } else {
            // The current fix is the caller's position: the same right as `myLocation`.
            guard engine.mayReceiveLocations(client.id) else {
                let status = engine.authorizationStatus(of: client.id)?.rawValue ?? "notDetermined"
                return .failure(
                    ProtocolError(.notAuthorized, "saving the current location needs authorization (status \(status))"))
            }
            guard let fix = engine.liveFix, !engine.isPaused else {
                return .failure(ProtocolError(.unavailable, "no current fix: give \"coordinate\""))
            }
            coordinate = Coordinate(latitude: fix.latitude, longitude: fix.longitude)
        }
        let place: SavedPlace
        var changed = places.places
        do {
            place = try changed.save(
                SavedPlace(
                    name: draft.name, coordinate: coordinate, radius: draft.radius ?? SavedPlace.defaultRadius,
                    owner: client.credentials.uid, createdAt: clock.wallNow(), note: draft.note, shared: draft.shared))
        } catch {
            return .failure(ProtocolError(.badRequest, "\"\(error.field)\": \(error.message)"))
        }
        return commitPlaces(
            changed, owner: client.credentials.uid, shared: draft.shared || wasShared(place, in: places.places)
        )
        .map { place }
    }

    private func deletePlace(_ name: String, for client: ClientConnection) -> Result<Void, ProtocolError> {
        var changed = places.places
        guard let removed = changed.remove(name: name, owner: client.credentials.uid) else {
            let shown = name.unicodeScalars.count > 64 ? String(name.prefix(64)) + "…" : name
            return .failure(ProtocolError(.notFound, "no saved place \"\(shown)\" of uid \(client.credentials.uid)"))
        }
        return commitPlaces(changed, owner: client.credentials.uid, shared: removed.shared)
    }

    private func wasShared(_ place: SavedPlace, in saved: SavedPlaces) -> Bool {
        saved.owned(by: place.owner).contains { $0.name == place.name && $0.shared }
    }

    /// Writes the owner's places, then tells monitors and the forwarder.
    private func commitPlaces(_ changed: SavedPlaces, owner: UInt32, shared: Bool) -> Result<Void, ProtocolError> {
        do {
            try places.commit(changed, owner: owner)
        } catch {
            log(.error, "\(error)")
            return .failure(ProtocolError(.storageFailed, "\(error); nothing was changed"))
        }
        // A deleted or changed place leaves `regions` at once (the engine
        // sends only real changes).
        for (id, watch) in places.watches.sorted(by: { $0.key < $1.key }) {
            run(.regionsChanged(id, watch.monitor.inside))
        }
        if shared { features.post(SharedPlaces(places.places.shared)) }
        return .success(())
    }

    private func startMonitoring(_ names: [String]?, for client: ClientConnection) -> Result<[String], ProtocolError> {
        guard engine.authorizationStatus(of: client.id)?.allowsLocation == true else {
            let status = engine.authorizationStatus(of: client.id)?.rawValue ?? "notDetermined"
            return .failure(ProtocolError(.notAuthorized, "monitoring regions needs authorization (status \(status))"))
        }
        let uid = client.credentials.uid
        if let names {
            let missing = places.places.monitored(by: uid, names: names).missing
            if let first = missing.first {
                let shown = first.unicodeScalars.count > 64 ? String(first.prefix(64)) + "…" : first
                return .failure(ProtocolError(.notFound, "no saved place \"\(shown)\" visible to uid \(uid)"))
            }
        }
        var watch = places.watches[client.id] ?? PlacesService.Watch(uid: uid, names: [])
        if let names, let current = watch.names {
            watch.names = current.union(names)
        } else {
            watch.names = nil
        }
        places.resolve(&watch)
        places.watches[client.id] = watch
        run(.monitoringChanged(client.id, true))
        return .success(watch.monitor.regionNames)
    }

    private func stopMonitoring(_ names: [String]?, for client: ClientConnection) -> Result<[String], ProtocolError> {
        guard var watch = places.watches[client.id] else {
            return .success([])
        }
        if let names {
            let current = watch.names ?? Set(watch.monitor.regionNames)
            watch.names = current.subtracting(names)
        } else {
            watch.names = []
        }
        places.resolve(&watch)
        if watch.names?.isEmpty == true {
            places.watches[client.id] = nil
            run(.monitoringChanged(client.id, false))
            return .success([])
        }
        places.watches[client.id] = watch
        run(.regionsChanged(client.id, watch.monitor.inside))
        return .success(watch.monitor.regionNames)
    }

    /// After a step that delivered an epoch: each monitor whose subscriber
    /// may be told this position gets it, in the epoch's order of events.
    func feedRegions() {
        guard !engine.isPaused, let fix = engine.liveFix else { return }
        let location = Coordinate(latitude: fix.latitude, longitude: fix.longitude)
        let now = clock.now()
        var changedRegions: [(SubscriberID, [String])] = []
        for id in places.watches.keys.sorted() {
            guard let client = server.clients[id] else {
                places.watches[id] = nil
                continue
            }
            guard engine.mayReceiveLocations(id) else { continue }
            let before = places.watches[id]!.monitor.inside
            let events = places.watches[id]!.monitor.update(
                location: location, accuracy: fix.horizontalAccuracy, now: now)
            guard !events.isEmpty else { continue }
            let watch = places.watches[id]!
            for event in events {
                let place = watch.placesByName[event.region.name]
                if let departure = deliver(ServerEncoder.regionEvent(event, place: place, location: fix), to: client) {
                    depart(id, departure)
                    break
                }
            }
            if watch.monitor.inside != before { changedRegions.append((id, watch.monitor.inside)) }
        }
        for (id, names) in changedRegions { run(.regionsChanged(id, names)) }
    }
}

extension RegionMonitor {
    /// The monitored places' names, in the order given.
    var regionNames: [String] { regions.map(\.name) }
}
