import AklocCore

/// The fixes of one visit so far, summed: their weighted centre and spread,
/// without keeping them. Positions are metres east and north of the first
/// fix (an equirectangular plane: exact enough within a visit's radius).
struct Stay: Hashable, Sendable {
    let originLatitude: Double
    let originLongitude: Double
    private let metresPerDegreeEast: Double
    private var weight = 0.0
    private var sumX = 0.0
    private var sumY = 0.0
    private var sumSquares = 0.0
    /// The first fix of the visit: its arrival.
    let arrival: Double
    /// The last fix inside it: its departure when it ends.
    private(set) var lastInside: TimelineFix
    private(set) var fixes = 0

    static let metresPerDegree = Location.earthRadius * Double.pi / 180

    init(first: TimelineFix) {
        originLatitude = first.latitude
        originLongitude = first.longitude
        metresPerDegreeEast = Self.metresPerDegree * Trigonometry.cos(first.latitude * Double.pi / 180)
        arrival = first.time
        lastInside = first
    }

    /// A fix weighs the inverse square of its accuracy (5 m at best, so a
    /// receiver claiming centimetres does not outweigh all the others).
    static func weight(of fix: TimelineFix) -> Double {
        let accuracy = max(5, fix.accuracy ?? 20)
        return 1 / (accuracy * accuracy)
    }

    private func plane(_ fix: TimelineFix) -> (x: Double, y: Double) {
        var east = fix.longitude - originLongitude
        if east > 180 { east -= 360 } else if east < -180 { east += 360 }
        return (east * metresPerDegreeEast, (fix.latitude - originLatitude) * Self.metresPerDegree)
    }

    mutating func add(_ fix: TimelineFix) {
        let (x, y) = plane(fix)
        let w = Self.weight(of: fix)
        weight += w
        sumX += w * x
        sumY += w * y
        sumSquares += w * (x * x + y * y)
        fixes += 1
        if fix.time >= lastInside.time { lastInside = fix }
    }

    /// The weighted centre, in degrees.
    var centre: (latitude: Double, longitude: Double) {
        guard weight > 0 else { return (originLatitude, originLongitude) }
        var longitude = originLongitude + sumX / weight / metresPerDegreeEast
        if longitude > 180 { longitude -= 360 } else if longitude < -180 { longitude += 360 }
        return (originLatitude + sumY / weight / Self.metresPerDegree, longitude)
    }

    /// Root-mean-square metres of the fixes from the centre.
    var spread: Double {
        guard weight > 0 else { return 0 }
        let meanX = sumX / weight
        let meanY = sumY / weight
        return max(0, sumSquares / weight - meanX * meanX - meanY * meanY).squareRoot()
    }

    func distanceFromArrival(_ fix: TimelineFix) -> Double {
        Location.distance(
            latitude: originLatitude, longitude: originLongitude, toLatitude: fix.latitude, longitude: fix.longitude)
    }

    func distanceFromCentre(_ fix: TimelineFix) -> Double {
        let centre = centre
        return Location.distance(
            latitude: centre.latitude, longitude: centre.longitude, toLatitude: fix.latitude, longitude: fix.longitude)
    }
}
