import AklocCore
import Testing

@testable import AklocGeoClue

/// The thresholds as the engine's throttle applies them, on a manual clock.
@Suite struct GeoClueThresholdsTests {
    /// Offers one fix a second for `seconds`, moving `metresPerSecond` north
    /// (speed as gpsd would report it); returns the seconds delivered at.
    private func deliveries(_ thresholds: GeoClueThresholds, metresPerSecond: Double, seconds: Int) -> [Int] {
        var throttle = Throttle(policy: thresholds.policy)
        var delivered: [Int] = []
        for second in 0..<seconds {
            let fix = Location(
                latitude: 10 + Double(second) * metresPerSecond / 111_195, longitude: 20, speed: metresPerSecond)
            if throttle.offer(fix, speed: metresPerSecond, at: .seconds(Double(second))) != nil {
                delivered.append(second)
            }
        }
        return delivered
    }

    @Test func theDefaultsGiveEveryEpoch() {
        #expect(GeoClueThresholds().policy.isValid)
        #expect(deliveries(GeoClueThresholds(), metresPerSecond: 0, seconds: 10) == Array(0..<10))
        #expect(deliveries(GeoClueThresholds(), metresPerSecond: 3, seconds: 10) == Array(0..<10))
    }

    @Test func aTimeThresholdSpacesDeliveriesMovingOrStill() {
        let thresholds = GeoClueThresholds(time: 4)
        #expect(deliveries(thresholds, metresPerSecond: 0, seconds: 13) == [0, 4, 8, 12])
        #expect(deliveries(thresholds, metresPerSecond: 5, seconds: 13) == [0, 4, 8, 12])
    }

    @Test func aDistanceThresholdNeedsThatMuchMotion() {
        let thresholds = GeoClueThresholds(distance: 10)
        // 3 m/s: 10 m are covered every 4 s.
        #expect(deliveries(thresholds, metresPerSecond: 3, seconds: 13) == [0, 4, 8, 12])
        // Standing still: the first fix only.
        #expect(deliveries(thresholds, metresPerSecond: 0, seconds: 30) == [0])
    }

    @Test func bothThresholdsMustBePassed() {
        // 10 m/s covers 5 m each second, but 3 s must pass too.
        #expect(deliveries(GeoClueThresholds(time: 3, distance: 5), metresPerSecond: 10, seconds: 10) == [0, 3, 6, 9])
    }

    @Test func hugeThresholdsStayValid() {
        let policy = GeoClueThresholds(time: .max, distance: .max).policy
        #expect(policy.isValid)
        #expect(policy.minInterval == ThrottlePolicy.intervalLimit)
    }
}
