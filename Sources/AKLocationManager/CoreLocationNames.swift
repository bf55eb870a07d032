import AklocCore
import AklocProtocol

// CoreLocation's names for what aklocd delivers, so code written against
// AKLocationManager on iOS compiles here with only its import changed.
// TimeInterval is deliberately not defined: it would clash with Foundation's
// for programs that import both; `Double` is what it is there too.

/// A fix as aklocd delivers it (docs/protocol.md §6): CoreLocation's member
/// names, and nil for whatever the receiver did not report.
public typealias CLLocation = Location
/// A stay at one place (docs/timeline.md), as `didVisit` delivers it:
/// CoreLocation's `arrivalDate` and `departureDate` are `arrival` and
/// `departure` (nil while the visit lasts, where CoreLocation has
/// `distantFuture`), its `horizontalAccuracy` is `radius`; akloc adds the
/// centre's `placemark`, the saved `place` it is in, `country` and `timeZone`.
public typealias CLVisit = Visit
/// Metres per second.
public typealias CLLocationSpeed = Double
/// Metres.
public typealias CLLocationDistance = Double
/// Metres.
public typealias CLLocationAccuracy = Double
/// Degrees.
public typealias CLLocationDegrees = Double

/// A latitude and longitude in degrees (WGS84).
public struct CLLocationCoordinate2D: Hashable, Sendable {
    public var latitude: CLLocationDegrees
    public var longitude: CLLocationDegrees

    public init(latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

extension Location {
    /// CoreLocation's `coordinate`.
    public var coordinate: CLLocationCoordinate2D {
        CLLocationCoordinate2D(latitude: latitude, longitude: longitude)
    }
}
