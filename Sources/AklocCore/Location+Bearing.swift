extension Location {
    /// Initial great-circle bearing from the first point to the second, degrees
    /// clockwise from true north in [0, 360); 0 for coincident points.
    public static func bearing(
        latitude lat1: Double, longitude lon1: Double, toLatitude lat2: Double, longitude lon2: Double
    ) -> Double {
        let radians = Double.pi / 180
        let phi1 = lat1 * radians
        let phi2 = lat2 * radians
        let deltaLambda = (lon2 - lon1) * radians
        let y = Trigonometry.sin(deltaLambda) * Trigonometry.cos(phi2)
        let x =
            Trigonometry.cos(phi1) * Trigonometry.sin(phi2)
            - Trigonometry.sin(phi1) * Trigonometry.cos(phi2) * Trigonometry.cos(deltaLambda)
        let degrees = Trigonometry.atan2(y, x) / radians
        let bearing = degrees < 0 ? degrees + 360 : degrees
        return bearing >= 360 ? 0 : bearing
    }
}
