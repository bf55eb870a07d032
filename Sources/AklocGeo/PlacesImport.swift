import AklocCore

/// Places another feature asks the places feature to save for one owner
/// (the MQTT forwarder's OwnTracks `setWaypoints`), posted as a fact: the
/// places feature owns the places and their files, and saves these through
/// its own rules (a name replaced keeps its creation time; an owner's limit
/// holds) as if the owner had saved each. `serial` tells one import from
/// the next when the places are the same.
public struct PlacesImport: Hashable, Sendable {
    public var owner: UInt32
    public var places: [SavedPlace]
    /// Who asked, for the log (`"MQTT setWaypoints"`).
    public var origin: String
    public var serial: UInt64

    public init(owner: UInt32, places: [SavedPlace], origin: String, serial: UInt64) {
        self.owner = owner
        self.places = places
        self.origin = origin
        self.serial = serial
    }
}
