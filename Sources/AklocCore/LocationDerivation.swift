/// The values of the derived key paths (`myPlacemark`, `country`,
/// `timeZone`) for one fix, as the geo lookups give them.
public struct DerivedValues: Hashable, Sendable {
    public var placemark: KeyPathValue
    public var country: KeyPathValue
    public var timeZone: KeyPathValue

    public init(placemark: KeyPathValue = .null, country: KeyPathValue = .null, timeZone: KeyPathValue = .null) {
        self.placemark = placemark
        self.country = country
        self.timeZone = timeZone
    }

    /// The value of a derived path; `.null` for any other.
    public func value(of root: KeyPath.Root) -> KeyPathValue {
        switch root {
        case .myPlacemark: placemark
        case .country: country
        case .timeZone: timeZone
        default: .null
        }
    }
}

/// What the engine asks to turn a fix into the derived values. The shell
/// gives one (the daemon's geo lookups); without one the values are `null`.
public protocol LocationDescriber: Sendable {
    func describe(_ location: Location) -> DerivedValues
}

/// The describer and the last lookup it made. A fix within `reuseDistance`
/// of the last lookup, and within `reuseSeconds` of its time, reuses it: a
/// steady receiver (a boat at anchor, a parked van) does no lookup per
/// epoch, and the time zone's offset is still re-read each minute.
struct LocationDerivation: Sendable {
    static let reuseDistance = 10.0
    static let reuseSeconds: Int64 = 60

    var describer: (any LocationDescriber)? {
        didSet { cached = nil }
    }
    private(set) var cached: (fix: Location, values: DerivedValues)?
    /// Lookups made (not reused), for `status` and tests.
    private(set) var lookups: UInt64 = 0

    init() {}

    func reusable(for fix: Location) -> DerivedValues? {
        guard let cached else { return nil }
        if let then = Self.time(of: cached.fix), let now = Self.time(of: fix),
            abs(now - then) >= Self.reuseSeconds
        {
            return nil
        }
        let moved = Location.distance(
            latitude: cached.fix.latitude, longitude: cached.fix.longitude, toLatitude: fix.latitude,
            longitude: fix.longitude)
        return moved < Self.reuseDistance ? cached.values : nil
    }

    /// The values for `fix`, reusing the last lookup when it is close enough.
    mutating func values(for fix: Location) -> DerivedValues {
        if let reused = reusable(for: fix) { return reused }
        guard let describer else { return DerivedValues() }
        let values = describer.describe(fix)
        lookups += 1
        cached = (fix, values)
        return values
    }

    /// The same without remembering (for `get`, which cannot mutate).
    func peek(_ fix: Location) -> DerivedValues {
        reusable(for: fix) ?? describer?.describe(fix) ?? DerivedValues()
    }

    private static func time(of fix: Location) -> Int64? {
        (fix.receivedAt ?? fix.timestamp)?.secondsSince1970
    }
}

extension Engine {
    /// The geo lookups behind the derived key paths; set by the shell once
    /// its data is loaded.
    public var describer: (any LocationDescriber)? {
        get { derivation.describer }
        set { derivation.describer = newValue }
    }

    /// Lookups the derived key paths made (steady fixes reuse the last one).
    public var derivedLookups: UInt64 { derivation.lookups }

    func derivedValue(_ keyPath: KeyPath, of fix: Location) -> KeyPathValue {
        derivation.peek(fix).value(of: keyPath.root)
    }

    mutating func derivedValues(for fix: Location) -> DerivedValues {
        derivation.values(for: fix)
    }

    /// One change event of a derived path for one observation.
    mutating func emitDerivedChange(
        _ new: KeyPathValue, index: Int, slot: Int, id: SubscriberID, _ changes: inout Fanout<ChangeKey>
    ) {
        let observation = subscribers[index].observations[slot]
        let old = observation.sendsOld ? observation.lastValue : nil
        subscribers[index].observations[slot].lastValue = new
        changes.add(id, key: ChangeKey(keyPath: observation.keyPath, old: old)) {
            .change(keyPath: observation.keyPath, new: new, old: old)
        }
    }

    /// The fix a subscriber may see, for shell-side lookups on the current
    /// fix (the geo ops): as `get myLocation` answers, `notAuthorized` for
    /// a status that allows no location, nil when there is none to see.
    public func visibleLocation(for id: SubscriberID) -> Result<Location?, EngineError> {
        guard let index = index(of: id) else {
            return .failure(EngineError(.badRequest, "subscriber \(id) is not connected"))
        }
        let subscriber = subscribers[index]
        guard subscriber.authorization.allowsLocation else {
            return .failure(
                EngineError(
                    .notAuthorized, "location needs authorization (status \(subscriber.authorization.rawValue))"))
        }
        return .success(subscriber.receivesLocations ? lastFix : nil)
    }
}
