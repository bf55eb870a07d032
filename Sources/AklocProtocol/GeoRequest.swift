import AklocGeo
import AklocJSON

/// The geo lookup ops of DESIGN §9 (docs/places.md, docs/countries.md),
/// decoded and checked: every value here is in range.
public enum GeoRequest: Sendable, Hashable {
    /// `coordinate` nil: the current fix (which needs location authorization).
    case reverseGeocode(coordinate: GeoPoint?)
    /// `near` nil: the current fix when there is one the client may see,
    /// else no distance ranking and no `within` limit.
    case searchPlaces(query: String, near: GeoPoint?, within: Double, limit: Int)
    case countries(CountrySelector, locale: String?)

    public var name: String {
        switch self {
        case .reverseGeocode: "reverseGeocode"
        case .searchPlaces: "searchPlaces"
        case .countries: "countries"
        }
    }

    /// Whether the answer depends on the current fix.
    public var usesCurrentFix: Bool {
        switch self {
        case .reverseGeocode(let coordinate): coordinate == nil
        case .searchPlaces(_, let near, _, _): near == nil
        case .countries: false
        }
    }

    /// `searchPlaces` without `within`: LocationPicker's `searchDistance`.
    public static let defaultWithin = 10_000.0
    /// Half the Earth's circumference: anything farther is "anywhere" anyway.
    public static let maximumWithin = 20_038_000.0
    public static let defaultLimit = 10
    public static let maximumLimit = Gazetteer.maxLimit
}

/// A point as requests carry it: `{"latitude":…,"longitude":…}`.
public struct GeoPoint: Hashable, Sendable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// What a `countries` request asks for: exactly one of its members, or none (every country).
public enum CountrySelector: Sendable, Hashable {
    case all
    /// Alpha-2 or alpha-3, as sent (any case).
    case code(String)
    /// "+1" or "1".
    case phoneCode(String)
    /// A prefix of any word of any name.
    case query(String)
}
