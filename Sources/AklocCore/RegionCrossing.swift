/// A monitored place entered or left (DESIGN §9). The shell's region
/// monitor decides that it happened; the engine decides who hears it and
/// when, as for every other event.
public struct RegionCrossing: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable {
        case enter
        case exit
    }

    public var kind: Kind
    /// The place as the places module writes it: one JSON object, opaque
    /// to the engine, which only routes it.
    public var place: [UInt8]
    /// The epoch that crossed.
    public var location: Location

    public init(kind: Kind, place: [UInt8], location: Location) {
        self.kind = kind
        self.place = place
        self.location = location
    }
}
