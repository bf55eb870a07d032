import Synchronization
import Testing

@testable import AklocCore

/// A describer with a border at longitude 5.005 (about 560 m east of the
/// harness's origin) that counts its lookups.
final class BorderDescriber: LocationDescriber {
    let calls = Mutex(0)

    func describe(_ location: Location) -> DerivedValues {
        calls.withLock { $0 += 1 }
        let country = location.longitude < 5.005 ? "A" : "B"
        return DerivedValues(
            placemark: .string("\(Int(location.longitude * 10_000)) in \(country)"), country: .string(country),
            timeZone: .string(country == "A" ? "Zone/A" : "Zone/B"))
    }

    var count: Int { calls.withLock { $0 } }
}

@Suite struct EngineDerivedKeyPathTests {
    static let everySecond = try! ThrottlePolicy(minInterval: 1, maxInterval: 1)

    func ready(_ describer: BorderDescriber?) -> Harness {
        var harness = Harness()
        harness.engine.describer = describer
        harness.connect(1)
        harness.send(.sourceConnected(name: "gpsd"))
        return harness
    }

    @Test func countryChangesOnceWhenTheFixCrossesTheBorder() {
        let describer = BorderDescriber()
        var harness = ready(describer)
        harness.request(1, .observe(KeyPath(.country), initial: false, old: true, policy: Self.everySecond))
        harness.request(1, .observe(KeyPath(.myPlacemark), initial: false, old: false, policy: Self.everySecond))
        for second in 0...10 {
            harness.at(Double(second), .fix(fix(east: Double(second) * 100, second: Int64(second))))
        }
        let countries = harness.log.changes(for: 1).filter { $0.keyPath.root == .country }
        // The first fix moves it from "no fix" (null) to A, then one crossing.
        #expect(countries.map(\.new) == [.string("A"), .string("B")])
        #expect(countries.map(\.old) == [.null, .string("A")])
        // The placemark moved with every fix (each 100 m: a new lookup).
        let placemarks = harness.log.changes(for: 1).filter { $0.keyPath.root == .myPlacemark }
        #expect(placemarks.count == 11)
        #expect(describer.count == 11)
    }

    @Test func aSteadyFixReusesItsLookup() {
        let describer = BorderDescriber()
        var harness = ready(describer)
        harness.request(1, .observe(KeyPath(.timeZone), initial: false, old: false, policy: Self.everySecond))
        // Jitter of a metre or two, 50 epochs: one lookup, one change.
        for second in 0..<50 {
            harness.at(Double(second), .fix(fix(north: Double(second % 3), east: 0, second: Int64(second))))
        }
        #expect(describer.count == 1)
        #expect(harness.log.changes(for: 1).map(\.new) == [.string("Zone/A")])
        // A minute on, the zone is read again (an offset can change at DST).
        harness.at(61, .fix(fix(second: 61)))
        #expect(describer.count == 2)
        #expect(harness.log.changes(for: 1).count == 1)
    }

    @Test func changesFollowTheObserversPolicy() throws {
        let describer = BorderDescriber()
        var harness = ready(describer)
        let slow = try ThrottlePolicy(minInterval: 30, maxInterval: 30)
        harness.request(1, .observe(KeyPath(.country), initial: false, old: false, policy: slow))
        for second in 0...20 {
            harness.at(Double(second), .fix(fix(east: Double(second) * 100, second: Int64(second))))
        }
        // Delivered at 0 s (A); the crossing at ~6 s waits for the policy.
        #expect(harness.log.changes(for: 1).map(\.new) == [.string("A")])
        harness.at(31, .fix(fix(east: 3100, second: 31)))
        #expect(harness.log.changes(for: 1).map(\.new) == [.string("A"), .string("B")])
    }

    @Test func getAndInitialGiveTheCurrentValue() {
        var harness = ready(BorderDescriber())
        #expect(harness.request(1, .get(KeyPath(.country))).replies(for: 1) == [.success(.value(.null))])
        harness.at(1, .fix(fix(east: 1000, second: 1)))
        #expect(harness.request(1, .get(KeyPath(.country))).replies(for: 1) == [.success(.value(.string("B")))])
        let observed = harness.request(1, .observe(KeyPath(.timeZone), initial: true, old: false, policy: nil))
        #expect(observed.changes(for: 1).map(\.new) == [.string("Zone/B")])
    }

    @Test func derivedPathsNeedLocationAuthorization() {
        var harness = ready(BorderDescriber())
        harness.connect(2, uid: 1001, .denied)
        harness.connect(3, uid: 1002, .authorizedWhenInUse, active: false)
        harness.at(1, .fix(fix(second: 1)))
        for root in [KeyPath.Root.myPlacemark, .country, .timeZone] {
            let denied = harness.request(2, .observe(KeyPath(root), initial: false, old: false, policy: nil))
            #expect(denied.replies(for: 2).first.map { (try? $0.get()) == nil } == true, "\(root)")
            let got = harness.request(2, .get(KeyPath(root))).replies(for: 2)
            #expect(got.first.map { (try? $0.get()) == nil } == true, "\(root)")
            // whenInUse without a session: allowed to ask, told nothing.
            #expect(harness.request(3, .get(KeyPath(root))).replies(for: 3) == [.success(.value(.null))])
        }
        #expect(harness.engine.visibleLocation(for: 2).map { _ in true } != .success(true))
        #expect((try? harness.engine.visibleLocation(for: 3).get()) == .some(nil))
        #expect((try? harness.engine.visibleLocation(for: 1).get())??.latitude == fix(second: 1).latitude)
    }

    @Test func withoutADescriberTheValuesAreNull() {
        var harness = ready(nil)
        harness.request(1, .observe(KeyPath(.myPlacemark), initial: true, old: false, policy: Self.everySecond))
        for second in 0...3 {
            harness.at(Double(second), .fix(fix(east: Double(second) * 1000, second: Int64(second))))
        }
        #expect(harness.log.changes(for: 1).map(\.new) == [.null])
    }
}
