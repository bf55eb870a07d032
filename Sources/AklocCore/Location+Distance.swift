extension Location {
    /// The mean Earth radius (IUGG), metres; the haversine's sphere.
    public static let earthRadius: Double = 6_371_008.8

    /// Great-circle distance in metres (haversine on a sphere). Within 0.5 % of
    /// the ellipsoidal distance: ample for throttling and distance filters.
    public func distance(to other: Location) -> Double {
        Location.distance(
            latitude: latitude, longitude: longitude, toLatitude: other.latitude, longitude: other.longitude)
    }

    /// The same, on bare coordinates in degrees.
    public static func distance(
        latitude lat1: Double, longitude lon1: Double, toLatitude lat2: Double, longitude lon2: Double
    ) -> Double {
        let radians = Double.pi / 180
        let phi1 = lat1 * radians
        let phi2 = lat2 * radians
        let sinHalfDeltaPhi = Trigonometry.sin((phi2 - phi1) / 2)
        let sinHalfDeltaLambda = Trigonometry.sin((lon2 - lon1) * radians / 2)
        let a =
            sinHalfDeltaPhi * sinHalfDeltaPhi
            + Trigonometry.cos(phi1) * Trigonometry.cos(phi2) * sinHalfDeltaLambda * sinHalfDeltaLambda
        let clamped = min(max(a, 0), 1)
        return 2 * earthRadius * Trigonometry.atan2NonNegative(clamped.squareRoot(), (1 - clamped).squareRoot())
    }
}
