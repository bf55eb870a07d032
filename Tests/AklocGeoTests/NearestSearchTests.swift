import AklocCore
import Foundation
import Testing

@testable import AklocGeo

/// The nearest-place search's bounds and passes (`NearestSearch`) against
/// brute force: the tree's order that the bounds rely on, every cell's bound
/// against the distances of the records in it, and the answers against the
/// plain depth-first search the gazetteer used before, record for record.
@Suite struct NearestSearchTests {
    static let gazetteer = GeoFixtures.gazetteer

    /// The split point's vector of every record, read once.
    static let vectors: [(Double, Double, Double)] = (0..<gazetteer.count).map { try! gazetteer.node($0).v }

    /// Squared chord length as the search computes it.
    static func squared(_ t: (x: Double, y: Double, z: Double), _ v: (Double, Double, Double)) -> Double {
        let dx = t.x - v.0
        let dy = t.y - v.1
        let dz = t.z - v.2
        return dx * dx + dy * dy + dz * dz
    }

    /// The search before the bounds: depth-first, near side first, a far
    /// side bounded by its splitting plane alone.
    struct PlainSearch {
        let target: (x: Double, y: Double, z: Double)
        var best = -1
        var bestSquared = Double.infinity

        mutating func visit(_ low: Int, _ high: Int, _ country: UInt16?) throws {
            guard low < high else { return }
            let mid = low + (high - low) / 2
            let (v, axis) = try gazetteer.node(mid)
            let squared = NearestSearchTests.squared(target, v)
            if squared < bestSquared, try country.map({ try gazetteer.countryKey(at: mid) == $0 }) ?? true {
                best = mid
                bestSquared = squared
            }
            let diff = axis == 0 ? target.x - v.0 : axis == 1 ? target.y - v.1 : target.z - v.2
            let (near, far) = diff <= 0 ? ((low, mid), (mid + 1, high)) : ((mid + 1, high), (low, mid))
            try visit(near.0, near.1, country)
            if diff * diff < bestSquared { try visit(far.0, far.1, country) }
        }
    }

    static func plainNearest(_ point: Coordinate, country: String? = nil) throws -> Int? {
        var search = PlainSearch(target: point.unitVector)
        try search.visit(0, gazetteer.count, country.flatMap(Gazetteer.countryKey))
        return search.best < 0 ? nil : search.best
    }

    @Test func everySplitOrdersItsSubtrees() throws {
        var disorders = 0
        // Per subtree, the least and greatest coordinate on each axis.
        func extent(_ low: Int, _ high: Int) throws -> (lo: [Double], hi: [Double])? {
            guard low < high else { return nil }
            let mid = low + (high - low) / 2
            let (v, axis) = try Self.gazetteer.node(mid)
            let point = [v.0, v.1, v.2]
            var lo = point
            var hi = point
            if let below = try extent(low, mid) {
                if below.hi[axis] > point[axis] { disorders += 1 }
                lo = zip(lo, below.lo).map { min($0, $1) }
                hi = zip(hi, below.hi).map { max($0, $1) }
            }
            if let above = try extent(mid + 1, high) {
                if above.lo[axis] < point[axis] { disorders += 1 }
                lo = zip(lo, above.lo).map { min($0, $1) }
                hi = zip(hi, above.hi).map { max($0, $1) }
            }
            return (lo, hi)
        }
        let all = try #require(try extent(0, Self.gazetteer.count))
        #expect(disorders == 0)
        #expect(all.lo.allSatisfy { $0 >= -1 } && all.hi.allSatisfy { $0 <= 1 })
    }

    /// Every cell of the tree, with the box the search gives it, for targets
    /// all over the sphere: its bound is at most the least squared distance
    /// of its records.
    @Test func noCellsBoundExceedsItsNearestRecord() throws {
        var random = GeoFixtures.Random(seed: 21)
        var targets = (0..<24).map { _ in GeoFixtures.randomPoint(&random) }
        for _ in 0..<24 {
            targets.append(try Self.gazetteer.coordinate(at: Int.random(in: 0..<Self.gazetteer.count, using: &random)))
        }
        targets += [Coordinate(latitude: 90, longitude: 0), Coordinate(latitude: -54.42, longitude: 3.36)]
        for point in targets {
            let target = point.unitVector
            // The probe takes no record (nothing is nearer than -inf); it only splits.
            var probe = NearestSearch(target: target, threshold: -.infinity)
            var violations = 0
            var cells = 0
            // Returns the least squared distance in the cell.
            func check(_ low: Int, _ high: Int, _ box: NearestSearch.Box) throws -> Double {
                guard low < high else { return .infinity }
                let (near, far, _) = try probe.split(Self.gazetteer, low, high, box, nil)
                let mid = low + (high - low) / 2
                let least = min(
                    Self.squared(target, Self.vectors[mid]), try check(near.0, near.1, near.2),
                    try check(far.0, far.1, far.2))
                cells += 1
                if probe.bound(box) > least { violations += 1 }
                return least
            }
            _ = try check(0, Self.gazetteer.count, NearestSearch.everywhere)
            #expect(cells == Self.gazetteer.count)
            #expect(violations == 0, "\(violations) cells bounded above their nearest record from \(point)")
        }
    }

    @Test func nearestIsThePlainSearchsRecord() throws {
        var random = GeoFixtures.Random(seed: 22)
        var points = (0..<1500).map { _ in GeoFixtures.randomPoint(&random) }
        for _ in 0..<1500 {
            let base = try Self.gazetteer.coordinate(at: Int.random(in: 0..<Self.gazetteer.count, using: &random))
            points.append(
                Coordinate(
                    latitude: max(-90, min(90, base.latitude + Double.random(in: -0.2...0.2, using: &random))),
                    longitude: max(-180, min(180, base.longitude + Double.random(in: -0.2...0.2, using: &random)))))
        }
        for point in points {
            #expect(try Self.gazetteer.nearest(to: point)?.index == Self.plainNearest(point), "at \(point)")
        }
    }

    /// The cases the best-first pass is for (a country whose places lie far,
    /// beyond other countries'), and random pairs of a point and a country.
    @Test func nearestInACountryIsThePlainSearchsRecord() throws {
        var cases: [(Coordinate, String)] = [
            (Coordinate(latitude: 81.8, longitude: -46.7), "GL"),  // northern Greenland
            (Coordinate(latitude: -45.28, longitude: 166.61), "NZ"),  // off Fiordland
            (Coordinate(latitude: -54.42, longitude: 3.36), "NO"),  // Bouvet Island, 12 000 km from Norway's places
            (Coordinate(latitude: -22.35, longitude: 40.36), "TF"),  // Europa Island
            (Coordinate(latitude: 16.5, longitude: 112.0), "CN"),  // the Paracels
            (Coordinate(latitude: 20.5, longitude: 55.0), "SA"),  // Rub' al Khali
            (Coordinate(latitude: -6.3, longitude: -84.3), "PE"),  // off Peru
            (Coordinate(latitude: 0, longitude: 0), "US"),
        ]
        var random = GeoFixtures.Random(seed: 23)
        for _ in 0..<80 {
            let country = try Self.gazetteer.countryCode(at: Int.random(in: 0..<Self.gazetteer.count, using: &random))
            cases.append((GeoFixtures.randomPoint(&random), country))
        }
        for (point, country) in cases {
            let found = try Self.gazetteer.nearest(to: point, countryCode: country)
            #expect(found?.index == (try Self.plainNearest(point, country: country)), "\(country) at \(point)")
            #expect(found?.countryCode == country)
        }
    }

    @Test func splitAxesKeepWhatWasRemembered() {
        let axes = SplitAxes(count: 1000)
        #expect((0..<1000).allSatisfy { axes.axis($0) == nil })
        for index in stride(from: 0, to: 1000, by: 3) { axes.remember(index, axis: index % 7 % 3) }
        for index in 0..<1000 {
            #expect(axes.axis(index) == (index % 3 == 0 ? index % 7 % 3 : nil))
        }
        // Remembering again (another copy of the gazetteer) changes nothing.
        axes.remember(999, axis: 999 % 7 % 3)
        #expect(axes.axis(999) == 999 % 7 % 3)
    }
}
