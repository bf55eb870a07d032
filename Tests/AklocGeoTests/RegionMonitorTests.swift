import AklocCore
import AklocGeo
import Foundation
import Testing

@Suite struct RegionMonitorTests {
    let center = Coordinate(latitude: 52.7, longitude: 5.3)

    /// A point `metres` east of `center` (small distances, Foundation's cos).
    func east(_ metres: Double) -> Coordinate {
        let degrees = metres / (Location.earthRadius * cos(center.latitude * .pi / 180)) * 180 / .pi
        return Coordinate(latitude: center.latitude, longitude: center.longitude + degrees)
    }

    func names(_ events: [RegionMonitor.Event]) -> [String] {
        events.map {
            switch $0 {
            case .didEnter(let region, _): "enter \(region.name)"
            case .didExit(let region, _): "exit \(region.name)"
            }
        }
    }

    @Test func entersAndLeavesWithTheAccuracyAsHysteresis() {
        let region = RegionMonitor.Region(name: "home", center: center, radius: 100)
        var monitor = RegionMonitor(regions: [region])
        var t = Instant.zero
        func step(_ metres: Double, _ accuracy: Double?) -> [String] {
            t = t.advanced(bySeconds: 1)
            return names(monitor.update(location: east(metres), accuracy: accuracy, now: t))
        }
        #expect(step(500, 10) == [])  // decided outside, silently
        #expect(step(95, 10) == [])  // 95 + 10 is not < 100
        #expect(step(80, 10) == ["enter home"])
        #expect(monitor.inside == ["home"])
        #expect(step(105, 10) == [])  // 105 - 10 is not > 100
        #expect(step(111, 10) == ["exit home"])
        #expect(monitor.inside.isEmpty)
        #expect(step(0, 150) == [])  // a circle bigger than the place never enters
        #expect(step(0, nil) == ["enter home"])
        #expect(step(0, .nan) == [] && step(1000, -1) == [])  // bad accuracy decides nothing
        #expect(monitor.inside == ["home"])
        #expect(names(monitor.update(location: Coordinate(latitude: .nan, longitude: 0), accuracy: 1, now: t)) == [])
    }

    @Test func startingInsideEntersOnce() {
        var monitor = RegionMonitor(regions: [.init(name: "a", center: center, radius: 50)])
        #expect(names(monitor.update(location: center, accuracy: 5, now: .zero)) == ["enter a"])
        #expect(names(monitor.update(location: center, accuracy: 5, now: .seconds(1))) == [])
    }

    @Test func aJitteringTrackAtTheEdgeDoesNotFlap() {
        let radius = 100.0
        var monitor = RegionMonitor(regions: [.init(name: "edge", center: center, radius: radius)])
        var random = GeoFixtures.Random(seed: 41)
        var events: [String] = []
        var naive: [Bool] = []
        // Approach, sit at the edge for 10 minutes with ±8 m of noise (eph 10 m), leave.
        var positions: [Double] = stride(from: 300.0, through: 40, by: -10).map { $0 }
        positions += (0..<600).map { _ in radius + Double.random(in: -8...8, using: &random) }
        positions += (0..<600).map { _ in 60 + Double.random(in: -8...8, using: &random) }
        positions += (0..<600).map { _ in radius + Double.random(in: -8...8, using: &random) }
        positions += stride(from: 120.0, through: 400, by: 10).map { $0 }
        for (i, metres) in positions.enumerated() {
            events += names(monitor.update(location: east(metres), accuracy: 10, now: .seconds(Double(i))))
            naive.append(metres < radius)
        }
        #expect(events == ["enter edge", "exit edge"])
        // Without hysteresis the same track would have flapped hundreds of times.
        let naiveChanges = zip(naive, naive.dropFirst()).filter { $0 != $1 }.count
        #expect(naiveChanges > 100)
    }

    @Test func replacingRegionsKeepsUnchangedStates() {
        let a = RegionMonitor.Region(name: "a", center: center, radius: 100)
        var monitor = RegionMonitor(regions: [a])
        _ = monitor.update(location: center, accuracy: 1, now: .zero)
        let b = RegionMonitor.Region(name: "b", center: east(1000), radius: 100)
        monitor.setRegions([a, b])
        #expect(monitor.inside == ["a"])
        #expect(names(monitor.update(location: center, accuracy: 1, now: .seconds(1))) == [])
        monitor.setRegions([.init(name: "a", center: center, radius: 200), b])
        #expect(monitor.inside.isEmpty)  // changed: undetermined again
        #expect(names(monitor.update(location: center, accuracy: 1, now: .seconds(2))) == ["enter a"])
    }

    /// The bundg_zeus_9 boat track (gpsd's capture, eph from the receiver):
    /// a saved place on it with a radius the track crosses gives one entry
    /// and one exit, at the fixes an independent scan says.
    @Test func aRealBoatTrackEntersAndLeavesOnce() throws {
        let rows = try GeoFixtures.csv("Tests/Fixtures/geo/ijsselmeer-track.csv")
        let track = rows.map {
            (
                Coordinate(latitude: Double($0["latitude"]!)!, longitude: Double($0["longitude"]!)!),
                Double($0["eph"] ?? "")
            )
        }
        // The track runs 430 m roughly straight: a mark 30 % along it with a
        // 100 m radius is crossed, leaving well outside on both sides.
        let middle = track[track.count * 3 / 10].0
        let radius = 100.0
        let place = try SavedPlace(
            name: "mark", coordinate: middle, radius: radius, owner: 1000, createdAt: FixTime(secondsSince1970: 0))
        var monitor = RegionMonitor(regions: [RegionMonitor.Region(place)])
        var events: [(String, Int)] = []
        for (i, fix) in track.enumerated() {
            for event in names(monitor.update(location: fix.0, accuracy: fix.1, now: .seconds(Double(i)))) {
                events.append((event, i))
            }
        }
        #expect(events.map(\.0) == ["enter mark", "exit mark"])
        // Independently: the first fix whose error circle is inside, and the
        // first after it whose circle is wholly outside (Foundation haversine).
        func metres(_ a: Coordinate, _ b: Coordinate) -> Double {
            let p1 = a.latitude * .pi / 180
            let p2 = b.latitude * .pi / 180
            let dp = p2 - p1
            let dl = (b.longitude - a.longitude) * .pi / 180
            let h = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
            return 2 * Location.earthRadius * asin(min(1, h.squareRoot()))
        }
        let enter = track.indices.first { metres(track[$0].0, middle) + (track[$0].1 ?? 0) < radius }!
        let exit = track.indices.first { $0 > enter && metres(track[$0].0, middle) - (track[$0].1 ?? 0) > radius }!
        #expect(events.map(\.1) == [enter, exit])
    }
}
