import AklocCore
import AklocFeature
import AklocGeo
import AklocPosix
import AklocProtocol

/// The saved places and region monitoring as a feature (DESIGN §9): it loads
/// the places at start, answers the places ops (a change is acknowledged only
/// once it is on disk), posts the shared places for other features, and
/// holds, per monitoring client, which places it watches and a
/// `RegionMonitor` over them. While anyone monitors, a subscriber of its own
/// takes every epoch and feeds the monitors; what they see goes back to the
/// engine (`regionsChanged` with the crossings), which tells each client like
/// any other event. The rules are in AklocGeo (`SavedPlace`, `SavedPlaces`,
/// `RegionMonitor`).
public final class PlacesFeature: Feature {
    public typealias Settings = PlacesSettings

    /// One client's monitoring: the names it asked for (nil = every place
    /// it sees, new ones included) and the monitor over what they resolve to.
    struct Watch {
        var uid: UInt32
        var names: Set<String>?
        var monitor = RegionMonitor()
        var placesByName: [String: SavedPlace] = [:]
    }

    public let name = "saved places"
    private let host: any FeatureHost
    /// Nil when the daemon keeps nothing on disk (places live in memory).
    private let store: SavedPlaceStore?
    public private(set) var places = SavedPlaces()
    private var watches: [SubscriberID: Watch] = [:]
    /// Takes every epoch while anyone monitors.
    private var epochs = EpochSubscription()
    /// The last `PlacesImport` carried out (a fact is kept and handed to a
    /// late observer again).
    private var lastImport: UInt64?

    public static func make(_ settings: PlacesSettings, host: any FeatureHost) -> PlacesFeature? {
        PlacesFeature(host: host)
    }

    init(host: any FeatureHost) {
        self.host = host
        store = host.stateDirectory.map { SavedPlaceStore(stateDirectory: $0) }
    }

    public func start() throws(ComponentError) {
        if let store {
            do {
                let loaded = try store.load()
                for warning in loaded.warnings { host.log(.warning, warning.message) }
                places = loaded.places
            } catch {
                throw ComponentError(.startFailed, component: name, "\(error)")
            }
        }
        host.post(SharedPlaces(places.shared))
        host.post(places)
        host.observe(PlacesImport.self) { [weak self] in self?.importPlaces($0) }
    }

    public func stop() {}

    public func clientGone(_ id: SubscriberID) {
        guard watches.removeValue(forKey: id) != nil else { return }
        updateEpochs()
    }

    // MARK: Ops

    public func answer(_ operation: ClientRequest.Operation, id: RequestID?, from client: FeatureClient)
        -> Result<[UInt8], ProtocolError>?
    {
        guard case .places(let request) = operation else { return nil }
        let result: Result<PlacesReply, ProtocolError>
        switch request {
        case .savePlace(let draft): result = save(draft, for: client).map(PlacesReply.place)
        case .places: result = .success(.places(places.visible(to: client.uid)))
        case .deletePlace(let name): result = delete(name, for: client).map { .done }
        case .startMonitoring(let names): result = startMonitoring(names, for: client).map(PlacesReply.names)
        case .stopMonitoring(let names): result = stopMonitoring(names, for: client).map(PlacesReply.names)
        }
        return result.map { ServerEncoder.reply(id: id, $0) }
    }

    private func save(_ draft: PlaceDraft, for client: FeatureClient) -> Result<SavedPlace, ProtocolError> {
        // The arguments before the right or the fix: a bad one is named, not
        // hidden behind "no current fix" (docs/protocol.md).
        do throws(GeoQueryError) {
            try SavedPlace.checkName(draft.name)
            if let radius = draft.radius { try SavedPlace.checkRadius(radius) }
            if let note = draft.note { try SavedPlace.checkNote(note) }
        } catch {
            return .failure(ProtocolError(error))
        }
        if draft.shared, !client.isAdmin {
            return .failure(ProtocolError(.forbidden, "a shared place needs root or the admin group"))
        }
        let coordinate: Coordinate
        if let latitude = draft.latitude, let longitude = draft.longitude {
            coordinate = Coordinate(latitude: latitude, longitude: longitude)
        } else {
            // The current fix is the caller's position: the same right as `myLocation`.
            guard host.mayReceiveLocations(client.id) else {
                let status = host.authorizationStatus(of: client.id)?.rawValue ?? "notDetermined"
                return .failure(
                    ProtocolError(.notAuthorized, "saving the current location needs authorization (status \(status))"))
            }
            guard let fix = host.liveFix else {
                return .failure(ProtocolError(.unavailable, "no current fix: give \"coordinate\""))
            }
            coordinate = Coordinate(latitude: fix.latitude, longitude: fix.longitude)
        }
        let place: SavedPlace
        var changed = places
        do {
            place = try changed.save(
                SavedPlace(
                    name: draft.name, coordinate: coordinate, radius: draft.radius ?? SavedPlace.defaultRadius,
                    owner: client.uid, createdAt: host.clock.wallNow(), note: draft.note, shared: draft.shared))
        } catch {
            return .failure(ProtocolError(error))
        }
        let wasShared = places.owned(by: place.owner).contains { $0.name == place.name && $0.shared }
        return commit(changed, owner: client.uid, shared: draft.shared || wasShared).map { place }
    }

    private func delete(_ name: String, for client: FeatureClient) -> Result<Void, ProtocolError> {
        var changed = places
        guard let removed = changed.remove(name: name, owner: client.uid) else {
            return .failure(ProtocolError(.notFound, "no saved place \"\(Self.shown(name))\" of uid \(client.uid)"))
        }
        return commit(changed, owner: client.uid, shared: removed.shared)
    }

    /// Makes `changed` the places once the owner's file is written (on
    /// failure nothing changes: acknowledged means persisted), then tells
    /// monitors and, when a shared place changed, the other features.
    private func commit(_ changed: SavedPlaces, owner: UInt32, shared: Bool) -> Result<Void, ProtocolError> {
        do {
            try store?.save(changed.owned(by: owner), of: owner)
        } catch {
            host.log(.error, "\(error)")
            return .failure(ProtocolError(.storageFailed, "\(error); nothing was changed"))
        }
        places = changed
        // A deleted or changed place leaves `regions` at once (the engine
        // sends only real changes); one that stayed keeps its state.
        for id in watches.keys.sorted() {
            resolve(&watches[id]!)
            host.run(.regionsChanged(id, watches[id]!.monitor.inside))
        }
        if shared { host.post(SharedPlaces(places.shared)) }
        // Every owner's places, for the features that name where someone was (the timeline).
        host.post(places)
        return .success(())
    }

    /// Another feature's places for one owner (MQTT `setWaypoints`): each
    /// saved as if that owner had saved it, all or none, and only that
    /// owner's places change.
    private func importPlaces(_ request: PlacesImport) {
        guard request.serial != lastImport else { return }
        lastImport = request.serial
        var changed = places
        var shared = false
        do {
            for var place in request.places {
                place.owner = request.owner
                shared = shared || place.shared
                try changed.save(place)
            }
        } catch {
            host.log(.warning, "\(request.origin): no place saved: \(error)")
            return
        }
        let wasShared = places.owned(by: request.owner).contains(where: \.shared)
        switch commit(changed, owner: request.owner, shared: shared || wasShared) {
        case .success:
            host.log(.notice, "\(request.origin): saved \(request.places.count) place(s) of uid \(request.owner)")
        case .failure(let error):
            host.log(.warning, "\(request.origin): \(error.message)")
        }
    }

    private func startMonitoring(_ names: [String]?, for client: FeatureClient) -> Result<[String], ProtocolError> {
        guard host.authorizationStatus(of: client.id)?.allowsLocation == true else {
            let status = host.authorizationStatus(of: client.id)?.rawValue ?? "notDetermined"
            return .failure(ProtocolError(.notAuthorized, "monitoring regions needs authorization (status \(status))"))
        }
        if let names, let first = places.monitored(by: client.uid, names: names).missing.first {
            return .failure(
                ProtocolError(.notFound, "no saved place \"\(Self.shown(first))\" visible to uid \(client.uid)"))
        }
        var watch = watches[client.id] ?? Watch(uid: client.uid, names: [])
        if let names, let current = watch.names {
            watch.names = current.union(names)
        } else {
            watch.names = nil
        }
        resolve(&watch)
        watches[client.id] = watch
        host.run(.monitoringChanged(client.id, true))
        updateEpochs()
        return .success(watch.monitor.regionNames)
    }

    private func stopMonitoring(_ names: [String]?, for client: FeatureClient) -> Result<[String], ProtocolError> {
        guard var watch = watches[client.id] else { return .success([]) }
        if let names {
            watch.names = (watch.names ?? Set(watch.monitor.regionNames)).subtracting(names)
        } else {
            watch.names = []
        }
        resolve(&watch)
        if watch.names?.isEmpty == true {
            watches[client.id] = nil
            host.run(.monitoringChanged(client.id, false))
            updateEpochs()
            return .success([])
        }
        watches[client.id] = watch
        host.run(.regionsChanged(client.id, watch.monitor.inside))
        return .success(watch.monitor.regionNames)
    }

    /// Points a watch's monitor at what its names resolve to now; a place
    /// that stayed the same keeps its inside/outside state.
    private func resolve(_ watch: inout Watch) {
        let resolved = places.monitored(by: watch.uid, names: watch.names.map { $0.sorted() }).places
        watch.placesByName = Dictionary(resolved.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        watch.monitor.setRegions(resolved.map(RegionMonitor.Region.init))
    }

    private static func shown(_ name: String) -> String {
        name.unicodeScalars.count > 64 ? String(name.prefix(64)) + "…" : name
    }

    // MARK: Monitoring

    /// The epochs subscriber exists exactly while someone monitors.
    private func updateEpochs() {
        epochs.want(!watches.isEmpty, host: host, phase: .withSockets) { [weak self] in self?.epoch($0) }
    }

    /// Each monitor whose client may be told this position gets it; what
    /// it saw goes to the engine once this step is done.
    private func epoch(_ fix: Location) {
        let location = Coordinate(latitude: fix.latitude, longitude: fix.longitude)
        let now = host.clock.now()
        for id in watches.keys.sorted() where host.mayReceiveLocations(id) {
            let before = watches[id]!.monitor.inside
            let events = watches[id]!.monitor.update(location: location, accuracy: fix.horizontalAccuracy, now: now)
            guard !events.isEmpty else { continue }
            let watch = watches[id]!
            let crossed = events.map { event in
                ServerEncoder.regionCrossing(event, place: watch.placesByName[event.region.name], location: fix)
            }
            if watch.monitor.inside != before || !crossed.isEmpty {
                host.run(.regionsChanged(id, watch.monitor.inside, crossed: crossed))
            }
        }
    }
}

/// The places have no config section of their own; the state directory
/// is the host's.
public struct PlacesSettings: Hashable, Sendable {
    public init() {}
}

extension RegionMonitor {
    /// The monitored places' names, in the order given.
    var regionNames: [String] { regions.map(\.name) }
}
