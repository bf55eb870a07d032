import AklocCore
import AklocGeo
import AklocPosix
import AklocSystemd

/// The saved places and the region monitors (DESIGN §9), as one component:
/// it loads the places at start and holds, per monitoring subscriber, which
/// places it watches and a `RegionMonitor` over them. The rules are in
/// AklocGeo (`SavedPlace`, `SavedPlaces`, `RegionMonitor`); this type keeps
/// them fed and the store written. Confined to the daemon's queue.
final class PlacesService: Component {
    /// One subscriber's monitoring: the names it asked for (nil = every place
    /// it sees, new ones included) and the monitor over what they resolve to.
    struct Watch {
        var uid: UInt32
        var names: Set<String>?
        var monitor = RegionMonitor()
        var placesByName: [String: SavedPlace] = [:]
    }

    let name = "saved places"
    /// Nil when the daemon runs without a state directory (places live in memory).
    let store: SavedPlaceStore?
    private let log: (LogLevel, String, KeyValuePairs<String, String>) -> Void
    private(set) var places = SavedPlaces()
    var watches: [SubscriberID: Watch] = [:]

    init(store: SavedPlaceStore?, log: @escaping (LogLevel, String, KeyValuePairs<String, String>) -> Void) {
        self.store = store
        self.log = log
    }

    func start() throws(ComponentError) {
        guard let store else { return }
        do {
            let loaded = try store.load()
            for warning in loaded.warnings { log(.warning, warning.message, [:]) }
            places = loaded.places
        } catch {
            throw ComponentError(.startFailed, component: name, "\(error)")
        }
    }

    func stop() {}

    /// Makes `changed` the places, once they are on disk: the owner's file
    /// is written first, and on failure nothing changes (acknowledged means
    /// persisted).
    func commit(_ changed: SavedPlaces, owner: UInt32) throws(StateStoreError) {
        try store?.save(changed.owned(by: owner), of: owner)
        places = changed
        for id in watches.keys { resolve(&watches[id]!) }
    }

    /// Points a watch's monitor at what its names resolve to now; a place
    /// that stayed the same keeps its inside/outside state.
    func resolve(_ watch: inout Watch) {
        let resolved = places.monitored(by: watch.uid, names: watch.names.map { $0.sorted() }).places
        watch.placesByName = Dictionary(resolved.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        watch.monitor.setRegions(resolved.map(RegionMonitor.Region.init))
    }
}
