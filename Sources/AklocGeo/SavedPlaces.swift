/// Every owner's saved places (DESIGN §9), as a value: the rules of the
/// collection (names unique per owner, saving a name again replaces it, at
/// most `SavedPlace.maxPerOwner` each, what a subscriber sees) live here; the
/// daemon's store only reads and writes files.
public struct SavedPlaces: Hashable, Sendable {
    /// Per owner, in the order first saved (a replaced place keeps its slot).
    public private(set) var byOwner: [UInt32: [SavedPlace]]

    public init(byOwner: [UInt32: [SavedPlace]] = [:]) {
        self.byOwner = byOwner.filter { !$0.value.isEmpty }
    }

    public func owned(by owner: UInt32) -> [SavedPlace] { byOwner[owner] ?? [] }

    /// The caller's own places, then the shared ones of other owners (by
    /// owner, then as saved): what `places` lists.
    public func visible(to uid: UInt32) -> [SavedPlace] {
        var places = owned(by: uid)
        for owner in byOwner.keys.sorted() where owner != uid {
            places += byOwner[owner]!.filter(\.shared)
        }
        return places
    }

    /// The shared places of every owner: what the MQTT forwarder publishes
    /// and monitors (the machine's places, never a user's private ones).
    public var shared: [SavedPlace] {
        byOwner.keys.sorted().flatMap { byOwner[$0]!.filter(\.shared) }
    }

    /// What a subscriber monitors, one place per name: its own place shadows
    /// a shared one of the same name, and of two shared ones the lower
    /// owner's wins (as `visible` lists them). `names` nil means all; a
    /// name it cannot see is returned in `missing`.
    public func monitored(by uid: UInt32, names: [String]?) -> (places: [SavedPlace], missing: [String]) {
        var byName: [String: SavedPlace] = [:]
        var order: [String] = []
        for place in visible(to: uid) where byName[place.name] == nil {
            byName[place.name] = place
            order.append(place.name)
        }
        guard let names else { return (order.map { byName[$0]! }, []) }
        var places: [SavedPlace] = []
        var missing: [String] = []
        var seen: Set<String> = []
        for name in names where seen.insert(name).inserted {
            if let place = byName[name] { places.append(place) } else { missing.append(name) }
        }
        return (places, missing)
    }

    /// Saves `place` for its owner, replacing one of the same name (which
    /// keeps its `createdAt`: OwnTracks names a waypoint by its creation
    /// time). Returns the place as stored. Refuses a new name past the limit.
    @discardableResult
    public mutating func save(_ place: SavedPlace) throws(GeoQueryError) -> SavedPlace {
        var places = owned(by: place.owner)
        if let index = places.firstIndex(where: { $0.name == place.name }) {
            var replaced = place
            replaced.createdAt = places[index].createdAt
            places[index] = replaced
            byOwner[place.owner] = places
            return replaced
        }
        guard places.count < SavedPlace.maxPerOwner else {
            throw GeoQueryError(
                .tooManyPlaces, field: "name",
                "uid \(place.owner) already has \(SavedPlace.maxPerOwner) saved places; delete one first")
        }
        places.append(place)
        byOwner[place.owner] = places
        return place
    }

    /// Removes the owner's place of that name; nil when there is none.
    @discardableResult
    public mutating func remove(name: String, owner: UInt32) -> SavedPlace? {
        guard var places = byOwner[owner], let index = places.firstIndex(where: { $0.name == name }) else {
            return nil
        }
        let removed = places.remove(at: index)
        byOwner[owner] = places.isEmpty ? nil : places
        return removed
    }

    /// Sets one owner's places wholesale (a loaded file).
    public mutating func replaceAll(of owner: UInt32, with places: [SavedPlace]) {
        byOwner[owner] = places.isEmpty ? nil : places
    }
}

/// The shared saved places (the machine's, never a user's private ones), as
/// the daemon posts them to its features whenever they change: the MQTT
/// forwarder publishes them as OwnTracks waypoints and watches them for
/// transitions.
public struct SharedPlaces: Hashable, Sendable {
    public var places: [SavedPlace]

    public init(_ places: [SavedPlace]) {
        self.places = places
    }
}
