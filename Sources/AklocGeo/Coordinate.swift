import AklocCore

/// A point on the Earth in degrees (WGS84), as the geo lookups take and give it.
public struct Coordinate: Hashable, Sendable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Finite, latitude within ±90 and longitude within ±180.
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
    }

    /// Great-circle metres (AklocCore's haversine).
    public func distance(to other: Coordinate) -> Double {
        Location.distance(
            latitude: latitude, longitude: longitude, toLatitude: other.latitude, longitude: other.longitude)
    }

    /// Initial bearing to `other`, degrees from true north in [0, 360).
    public func bearing(to other: Coordinate) -> Double {
        Location.bearing(
            latitude: latitude, longitude: longitude, toLatitude: other.latitude, longitude: other.longitude)
    }

    /// The point on the unit sphere, for the k-d tree's chord distances.
    var unitVector: (x: Double, y: Double, z: Double) {
        let radians = Double.pi / 180
        let phi = latitude * radians
        let lambda = longitude * radians
        let cosPhi = Trigonometry.cos(phi)
        return (cosPhi * Trigonometry.cos(lambda), cosPhi * Trigonometry.sin(lambda), Trigonometry.sin(phi))
    }
}
