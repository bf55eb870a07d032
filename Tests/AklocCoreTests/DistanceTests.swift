import Foundation
import Testing

@testable import AklocCore

@Suite struct DistanceTests {
    /// The reference haversine with libm, which the core may not use.
    func reference(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        let r = Location.earthRadius
        let p1 = a.0 * .pi / 180
        let p2 = b.0 * .pi / 180
        let dp = p2 - p1
        let dl = (b.1 - a.1) * .pi / 180
        let h =
            Foundation.sin(dp / 2) * Foundation.sin(dp / 2)
            + Foundation.cos(p1) * Foundation.cos(p2) * Foundation.sin(dl / 2) * Foundation.sin(dl / 2)
        return 2 * r * Foundation.atan2(h.squareRoot(), (1 - h).squareRoot())
    }

    @Test func knownDistances() {
        let origin = Location(latitude: 0, longitude: 0)
        let degreeEast = Location(latitude: 0, longitude: 1)
        #expect(abs(origin.distance(to: degreeEast) - 111_195.08) < 0.01)
        #expect(origin.distance(to: origin) == 0)
        let pole = Location(latitude: 90, longitude: 0)
        #expect(abs(origin.distance(to: pole) - Location.earthRadius * .pi / 2) < 1e-6)
        let antipode = Location(latitude: 0, longitude: 180)
        #expect(abs(origin.distance(to: antipode) - Location.earthRadius * .pi) < 1e-6)
        // Across the antimeridian the short way round.
        let west = Location(latitude: 0, longitude: 179.9)
        let east = Location(latitude: 0, longitude: -179.9)
        #expect(abs(west.distance(to: east) - 22_239.0) < 0.1)
    }

    @Test func metreScaleDistances() {
        let a = fix()
        let b = fix(north: 2)
        #expect(abs(a.distance(to: b) - 2) < 1e-6)
        #expect(abs(fix().distance(to: fix(east: 3)) - 3 * Foundation.cos(52 * Double.pi / 180)) < 1e-6)
    }

    @Test func matchesLibmOnRandomPairs() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let a = (Double.random(in: -90...90, using: &generator), Double.random(in: -180...180, using: &generator))
            let b = (Double.random(in: -90...90, using: &generator), Double.random(in: -180...180, using: &generator))
            let ours = Location.distance(latitude: a.0, longitude: a.1, toLatitude: b.0, longitude: b.1)
            #expect(abs(ours - reference(a, b)) < 1e-6, "\(a) \(b)")
        }
    }

    @Test func trigonometryMatchesLibm() {
        var x = -10.0
        while x <= 10 {
            #expect(abs(Trigonometry.sin(x) - Foundation.sin(x)) < 4e-16)
            #expect(abs(Trigonometry.cos(x) - Foundation.cos(x)) < 4e-16)
            x += 0.001_7
        }
        var y = 0.0
        while y <= 5 {
            #expect(abs(Trigonometry.atan2NonNegative(y, 1) - Foundation.atan2(y, 1)) < 4e-16)
            #expect(abs(Trigonometry.atan2NonNegative(1, y) - Foundation.atan2(1, y)) < 4e-16)
            y += 0.003_1
        }
        #expect(Trigonometry.atan2NonNegative(0, 0) == 0)
    }
}
