import AklocCore

/// GeoClue's `GClueAccuracyLevel`, the value of a client's
/// `RequestedAccuracyLevel` (docs/desktop.md says what each one gives).
///
/// akloc has one source, the GPS, so a level does not pick sources as in
/// GeoClue: it coarsens the fix. The position is snapped to the centre of a
/// grid cell of `cellDegrees` (so every point of a cell answers the same,
/// and moving inside it reveals nothing), `Accuracy` is at least the cell's
/// `accuracy` (GeoClue's own figures for the level), and below `exact`
/// altitude, speed and heading are withheld (they say more than the cell).
public enum AccuracyLevel: UInt32, CaseIterable, Sendable {
    case none = 0
    case country = 1
    case city = 4
    case neighborhood = 5
    case street = 6
    case exact = 8

    /// The level a requested value gets: values between GeoClue's named
    /// levels count as the coarser neighbour (GeoClue compares them as
    /// numbers), anything above `exact` as `exact`.
    public init(requested value: UInt32) {
        self = Self.allCases.last { $0.rawValue <= value } ?? .none
    }

    /// The grid, in degrees of latitude and of longitude; nil for `exact`
    /// and `none`.
    public var cellDegrees: Double? {
        switch self {
        case .country: 1
        case .city: 0.1
        case .neighborhood: 0.02
        case .street: 0.005
        case .none, .exact: nil
        }
    }

    /// The accuracy (metres) a coarsened fix reports at least: GeoClue's
    /// GCLUE_LOCATION_ACCURACY_* for the level.
    public var accuracy: Double? {
        switch self {
        case .country: 300_000
        case .city: 15_000
        case .neighborhood: 3_000
        case .street: 1_000
        case .none, .exact: nil
        }
    }

    /// What a client at this level is shown of `location`; nil at `none`.
    public func coarsen(_ location: Location) -> GeoClueLocation? {
        if self == .none { return nil }
        var shown = GeoClueLocation(location)
        guard let cell = cellDegrees, let floor = accuracy else { return shown }
        shown.latitude = Self.snap(location.latitude, cell: cell, limit: 90)
        shown.longitude = Self.snap(location.longitude, cell: cell, limit: 180)
        shown.accuracy = max(floor, location.horizontalAccuracy ?? 0)
        shown.altitude = GeoClueLocation.unknownAltitude
        shown.speed = GeoClueLocation.unknownSpeed
        shown.heading = GeoClueLocation.unknownHeading
        return shown
    }

    /// The centre of the cell holding `value`, kept inside ±`limit`.
    static func snap(_ value: Double, cell: Double, limit: Double) -> Double {
        let centre = ((value / cell).rounded(.down) + 0.5) * cell
        return min(max(centre, -limit + cell / 2), limit - cell / 2)
    }
}
