/// An observable key path (DESIGN §3), KVO-style.
///
/// `myLocation` is the throttled location, `rawLocation` every epoch; both take
/// a member (`myLocation.speed`, `myLocation.coordinate`).
public struct KeyPath: Hashable, Sendable, CustomStringConvertible {
    public enum Root: String, Hashable, Sendable, CaseIterable {
        case myLocation
        case rawLocation
        case authorizationStatus
        case state
        case source
        /// Derived from `myLocation` by the geo lookups (docs/places.md).
        case myPlacemark
        case country
        case timeZone
        /// Names of the monitored saved places the fix is inside (DESIGN §9),
        /// set by the shell's region monitor (`Input.regionsChanged`).
        case regions
        /// What the selected receiver sees of the sky, from gpsd's SKY
        /// (DESIGN §16): it places the receiver, so `myLocation`'s authorization applies.
        case satellites
        /// The visit under way (DESIGN §15) or null, set by the timeline
        /// feature (`Input.visited`): it is history, so only subscribers that
        /// may read the track get it (`readsHistory`).
        case visit
    }

    /// The members of a location a key path may name.
    public enum Member: String, Hashable, Sendable, CaseIterable {
        case coordinate
        case latitude
        case longitude
        case altitude
        case ellipsoidalAltitude
        case horizontalAccuracy
        case verticalAccuracy
        case speed
        case speedAccuracy
        case course
        case courseAccuracy
        case climb
        case mode
        case timestamp
        case receivedAt
        case device
        case fixStatus
        case satellitesUsed
        case hdop
    }

    public var root: Root
    public var member: Member?

    public init(_ root: Root, member: Member? = nil) {
        self.root = root
        self.member = member
    }

    /// Whether values of this path are locations (throttled per policy for `myLocation`).
    public var isLocation: Bool { root == .myLocation || root == .rawLocation }

    /// Whether values of this path are derived from `myLocation` (its
    /// policy, its authorization), changing only when the derived value does.
    public var isDerived: Bool { root == .myPlacemark || root == .country || root == .timeZone }

    /// Whether the path reveals the position: `myLocation`'s authorization
    /// applies (`regions` too: the places the fix is inside, DESIGN §9).
    public var revealsLocation: Bool { isLocation || isDerived || root == .regions || root == .satellites }

    /// Whether the path is history (where one stays, since when): only
    /// `always` subscribers and admins, as for the track.
    public var readsHistory: Bool { root == .visit }

    public var description: String {
        member.map { "\(root.rawValue).\($0.rawValue)" } ?? root.rawValue
    }
}

/// A value a key path resolves to, ready for the wire.
public enum KeyPathValue: Hashable, Sendable {
    case null
    case number(Double)
    case string(String)
    case location(Location)
    case coordinate(latitude: Double, longitude: Double)
    case time(FixTime)
    /// A value already in JSON (a placemark, country or time zone object
    /// from the geo lookups: AklocCore knows no JSON); compared by its bytes.
    case json([UInt8])
    /// A JSON array of strings (`regions`).
    case names([String])
    /// The `satellites` object.
    case sky(SkyView)
}
