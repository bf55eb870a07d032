import AklocCore
import Testing

@Suite struct ThrottleTests {
    /// Offers one fix per second for `seconds` s and returns (time, afterTimeInterval) of each delivery.
    func run(
        _ policy: ThrottlePolicy = ThrottlePolicy(), seconds: Int, step: Double = 1,
        fixAt: (Int) -> (Location, Double)
    ) -> [(Double, Double?)] {
        var throttle = Throttle(policy: policy)
        var delivered: [(Double, Double?)] = []
        for i in 0...seconds {
            let (location, speed) = fixAt(i)
            let t = Double(i) * step
            if let delivery = throttle.offer(location, speed: speed, at: .seconds(t)) {
                delivered.append((t, delivery.afterTimeInterval))
            }
        }
        return delivered
    }

    @Test func walkingDeliversExactlyEveryFiveSeconds() {
        let delivered = run(seconds: 60) { i in (fix(north: Double(i), speed: 1), 1) }
        #expect(delivered.map(\.0) == stride(from: 0.0, through: 60, by: 5).map { $0 })
        #expect(delivered.first?.1 == nil)
        #expect(delivered.dropFirst().allSatisfy { $0.1 == 5 })
    }

    @Test func standingStillDeliversEveryMaxInterval() {
        let delivered = run(seconds: 900) { _ in (fix(speed: 0), 0) }
        #expect(delivered.map(\.0) == [0, 300, 600, 900])
        #expect(delivered.dropFirst().allSatisfy { $0.1 == 300 })
    }

    @Test func slowerThanUpdateSpeedIsStill() {
        let delivered = run(seconds: 310) { i in (fix(north: Double(i) * 0.3), 0.3) }
        #expect(delivered.map(\.0) == [0, 300])
    }

    @Test func updateSpeedZeroStillNeedsSomeMotion() throws {
        let policy = try ThrottlePolicy(updateSpeed: 0)
        #expect(run(policy, seconds: 10) { _ in (fix(), 0) }.map(\.0) == [0])
        #expect(run(policy, seconds: 10) { _ in (fix(), 0.01) }.map(\.0) == [0, 5, 10])
    }

    @Test func thresholdIsInclusive() {
        var throttle = Throttle(policy: ThrottlePolicy())
        #expect(throttle.offer(fix(), speed: 1, at: .seconds(100)) != nil)
        #expect(throttle.offer(fix(), speed: 1, at: Instant(nanoseconds: 104_999_999_999)) == nil)
        #expect(throttle.offer(fix(), speed: 1, at: .seconds(105))?.afterTimeInterval == 5)
    }

    @Test func afterTimeIntervalIsTheRealElapsedTime() {
        // Fixes every 1.3 s: the first one at or past 5 s arrives at 5.2 s.
        let delivered = run(seconds: 12, step: 1.3) { i in (fix(north: Double(i)), 1) }
        #expect(delivered.count == 4)
        #expect(delivered.dropFirst().allSatisfy { abs(($0.1 ?? 0) - 5.2) < 1e-9 })
    }

    @Test func speedChangesSwitchTheThreshold() {
        // Moving for 20 s, then still: the next delivery comes 300 s after the last one.
        let delivered = run(seconds: 400) { i in i <= 20 ? (fix(north: Double(i)), 1) : (fix(north: 20), 0) }
        #expect(delivered.map(\.0) == [0, 5, 10, 15, 20, 320])
    }

    @Test func distanceFilterHoldsBackJitterButNotTheHeartbeat() throws {
        // A receiver standing still but reporting 0.5 m/s of noise, wandering 2 m.
        let jitter: (Int) -> (Location, Double) = { i in (fix(north: Double(i % 3)), 0.5) }
        #expect(run(seconds: 60, fixAt: jitter).count == 13)
        let filtered = run(try ThrottlePolicy(distanceFilter: 50), seconds: 700, fixAt: jitter)
        #expect(filtered.map(\.0) == [0, 300, 600])
    }

    @Test func distanceFilterLetsRealMotionThrough() throws {
        // 12 m/s: 60 m per 5 s passes a 50 m filter; at 5.5 m/s it takes 10 s.
        let fast = run(try ThrottlePolicy(distanceFilter: 50), seconds: 30) { i in (fix(north: Double(i) * 12), 12) }
        #expect(fast.map(\.0) == [0, 5, 10, 15, 20, 25, 30])
        let slow = run(try ThrottlePolicy(distanceFilter: 50), seconds: 30) { i in (fix(north: Double(i) * 5.5), 5.5) }
        #expect(slow.map(\.0) == [0, 10, 20, 30])
    }

    @Test func desiredAccuracySkipsWorseFixesAndPassesUnknownOnes() throws {
        let policy = try ThrottlePolicy(desiredAccuracy: 10)
        var throttle = Throttle(policy: policy)
        #expect(throttle.offer(fix(accuracy: 25), speed: 1, at: .seconds(0)) == nil)
        #expect(
            throttle.offer(fix(accuracy: 8), speed: 1, at: .seconds(1)) == Throttle.Delivery(afterTimeInterval: nil))
        #expect(throttle.offer(fix(accuracy: 25), speed: 1, at: .seconds(6)) == nil)
        #expect(throttle.offer(fix(accuracy: 10), speed: 1, at: .seconds(7))?.afterTimeInterval == 6)
        #expect(throttle.offer(fix(accuracy: nil), speed: 1, at: .seconds(12))?.afterTimeInterval == 5)
    }

    @Test func forceBypassesThresholdAndFilters() throws {
        var throttle = Throttle(policy: try ThrottlePolicy(distanceFilter: 50, desiredAccuracy: 5))
        #expect(throttle.offer(fix(accuracy: 1), speed: 0, at: .seconds(0)) != nil)
        throttle.forceNext = true
        let forced = throttle.offer(fix(accuracy: 100), speed: 0, at: .seconds(61.5))
        #expect(forced?.afterTimeInterval == 61.5)
        #expect(!throttle.forceNext)
        #expect(throttle.offer(fix(accuracy: 1), speed: 0, at: .seconds(62)) == nil)
    }

    @Test func replacingThePolicyKeepsTheSchedule() throws {
        var throttle = Throttle(policy: ThrottlePolicy())
        _ = throttle.offer(fix(), speed: 0, at: .seconds(0))
        throttle.replacePolicy(try ThrottlePolicy(minInterval: 1, maxInterval: 10))
        #expect(throttle.offer(fix(), speed: 0, at: .seconds(9)) == nil)
        #expect(throttle.offer(fix(), speed: 0, at: .seconds(10))?.afterTimeInterval == 10)
    }

    @Test func speedComesFromTheReceiverElseFromTheLastTwoFixes() {
        let previous = fix()
        #expect(
            Throttle.speed(
                of: fix(north: 2, speed: 7), receivedAt: .seconds(1), previous: previous,
                previousReceivedAt: .zero) == 7)
        let computed = Throttle.speed(
            of: fix(north: 2), receivedAt: .seconds(1), previous: previous, previousReceivedAt: .zero)
        #expect(abs(computed - 2) < 1e-6)
        #expect(Throttle.speed(of: fix(north: 2), receivedAt: .seconds(1), previous: nil, previousReceivedAt: nil) == 0)
        #expect(
            Throttle.speed(of: fix(north: 2), receivedAt: .zero, previous: previous, previousReceivedAt: .zero) == 0)
    }
}
