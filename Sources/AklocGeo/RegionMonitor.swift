import AklocCore

/// Region entry and exit for saved places (DESIGN §9), as a pure state
/// machine: feed it each fix with its accuracy and `now`, it returns the
/// events to send. The accuracy is the hysteresis: a place is entered only
/// when the whole error circle is inside it (distance + accuracy < radius)
/// and left only when the whole circle is outside (distance − accuracy >
/// radius), so a fix jittering at the edge does not flap.
public struct RegionMonitor: Sendable {
    public struct Region: Hashable, Sendable {
        public var name: String
        public var center: Coordinate
        public var radius: Double

        public init(name: String, center: Coordinate, radius: Double) {
            self.name = name
            self.center = center
            self.radius = radius
        }

        public init(_ place: SavedPlace) {
            self.init(name: place.name, center: place.coordinate, radius: place.radius)
        }
    }

    public enum Event: Hashable, Sendable {
        case didEnter(Region, at: Instant)
        case didExit(Region, at: Instant)

        /// The region entered or left.
        public var region: Region {
            switch self {
            case .didEnter(let region, _), .didExit(let region, _): region
            }
        }
    }

    /// Per region: not yet decided (no fix settled it), or inside/outside since a time.
    enum State: Hashable, Sendable {
        case undetermined
        case inside(since: Instant)
        case outside(since: Instant)
    }

    public private(set) var regions: [Region] = []
    private var states: [String: State] = [:]

    public init(regions: [Region] = []) {
        self.regions = regions
        for region in regions { states[region.name] = .undetermined }
    }

    /// Names of the regions the fixes put us in, in the order they were given.
    public var inside: [String] {
        regions.compactMap { region in
            if case .inside = states[region.name] { return region.name }
            return nil
        }
    }

    /// Replaces the monitored regions. A region that stays (same name,
    /// centre and radius) keeps its state; a changed or new one starts
    /// undetermined; a removed one is dropped without an event (the client
    /// asked to stop watching it).
    public mutating func setRegions(_ newRegions: [Region]) {
        let old = Dictionary(regions.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
        var newStates: [String: State] = [:]
        for region in newRegions {
            newStates[region.name] = old[region.name] == region ? states[region.name] ?? .undetermined : .undetermined
        }
        regions = newRegions
        states = newStates
    }

    /// One fix. A coordinate that is not valid, or an accuracy that is not a
    /// finite non-negative number, decides nothing. No accuracy counts as 0.
    /// The first fix that decides a region as inside enters it (a monitor
    /// started inside a place reports it); one deciding outside is silent.
    public mutating func update(location: Coordinate, accuracy: Double?, now: Instant) -> [Event] {
        guard location.isValid else { return [] }
        let accuracy = accuracy ?? 0
        guard accuracy.isFinite, accuracy >= 0 else { return [] }
        var events: [Event] = []
        for region in regions {
            let distance = region.center.distance(to: location)
            let surelyInside = distance + accuracy < region.radius
            let surelyOutside = distance - accuracy > region.radius
            switch states[region.name] ?? .undetermined {
            case .undetermined:
                if surelyInside {
                    states[region.name] = .inside(since: now)
                    events.append(.didEnter(region, at: now))
                } else if surelyOutside {
                    states[region.name] = .outside(since: now)
                }
            case .inside:
                if surelyOutside {
                    states[region.name] = .outside(since: now)
                    events.append(.didExit(region, at: now))
                }
            case .outside:
                if surelyInside {
                    states[region.name] = .inside(since: now)
                    events.append(.didEnter(region, at: now))
                }
            }
        }
        return events
    }
}
