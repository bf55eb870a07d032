import Testing

@testable import AklocCore

/// Issue 31 on a manual clock: a receiver the engine has not seen, gpsd
/// splitting each epoch (its estimate, then the receiver's TPV 0.3 s later),
/// with gpsd's first epoch after opening the device a single TPV. Every
/// delivery has the receiver's track, and no stream sees two deliveries
/// closer than its `minInterval`, the first gap included.
@Suite struct EngineEpochStartTests {
    /// One subscriber per policy, started before the first TPV; a minute of
    /// a boat at 3 m/s. Returns each one's deliveries: when, what, after.
    func run(_ policies: [ThrottlePolicy], firstEpochAlone: Bool = true, watchRestartAt: Double? = nil)
        -> [[(at: Double, location: Location, after: Double?)]]
    {
        var harness = Harness(knownDevice: nil)
        harness.send(.sourceConnected(name: "gpsd://127.0.0.1:2947"))
        for (index, policy) in policies.enumerated() {
            harness.connect(SubscriberID(index + 1))
            harness.start(SubscriberID(index + 1), policy)
        }
        var seen = Array(repeating: [(at: Double, location: Location, after: Double?)](), count: policies.count)
        func feed(_ at: Double, _ input: Engine.Input) {
            let outputs = harness.at(at, input)
            for index in policies.indices {
                for update in outputs.updates(for: SubscriberID(index + 1)) {
                    seen[index].append((at, update.location, update.after))
                }
            }
        }
        for second in 0..<60 {
            let start = 10 + Double(second)
            if let watchRestartAt, start == watchRestartAt {
                // Every subscriber stops and starts again: the watch goes off
                // and on, and gpsd may have reopened the device.
                for index in policies.indices { harness.request(SubscriberID(index + 1), .stopUpdatingLocation) }
                #expect(!harness.engine.watching)
                for (index, policy) in policies.enumerated() { harness.start(SubscriberID(index + 1), policy) }
                #expect(!harness.engine.epochs.knowsShape(of: "/dev/ttyUSB0"))
            }
            let north = Double(second) * 3
            feed(start, .fix(fix(north: north, second: Int64(second), speed: 11, course: nil)))
            if second > 0 || !firstEpochAlone {
                feed(start + 0.3, .fix(fix(north: north, second: Int64(second), speed: 3, course: 200)))
            }
            feed(start + 0.5, .tick)
        }
        feed(80, .sourceDisconnected)
        return seen
    }

    @Test func everyDeliveryHasTheReceiversTrackAndTheFirstGapIsNotShort() throws {
        let policies = [try ThrottlePolicy(minInterval: 2), try ThrottlePolicy(minInterval: 5), ThrottlePolicy()]
        let seen = run(policies)
        for (policy, deliveries) in zip(policies, seen) {
            #expect(deliveries.count >= Int(60 / max(policy.minInterval, 1)) - 2, "\(policy): \(deliveries.count)")
            // gpsd's lone first TPV had no track: the one epoch that goes out without one, as gpsd sent it.
            #expect(deliveries.dropFirst().allSatisfy { $0.location.course == 200 && $0.location.speed == 3 })
            // The first one waited for the next epoch: delivered at 11, one cycle after its TPV.
            #expect(deliveries.first?.at == 11 && deliveries.first?.after == nil)
            for (previous, next) in zip(deliveries, deliveries.dropFirst()) {
                #expect(next.at - previous.at >= policy.minInterval - 1e-9, "\(policy): \(previous.at) -> \(next.at)")
                #expect(
                    abs((next.after ?? -1) - (next.at - previous.at)) < 1e-6,
                    "afterTimeInterval is the gap the subscriber saw")
            }
        }
        // minInterval 2: 11 (epoch 0, closed by epoch 1), 13 (epoch 2, closed
        // by epoch 3; epochs 1 and 2 were alike, so the shape is known), then
        // on the receiver's TPVs: 15.3 (epoch 5), every 2 s.
        #expect(seen[0].prefix(4).map { ($0.at * 10).rounded() / 10 } == [11, 13, 15.3, 17.3])
    }

    @Test func aStartWithWholeEpochsLearnsFromTheFirstTwo() throws {
        let seen = run([try ThrottlePolicy(minInterval: 2)], firstEpochAlone: false)
        #expect(seen[0].allSatisfy { $0.location.course == 200 })
        // Epochs 0 and 1 teach the shape, each delivered when the next began.
        #expect(seen[0].prefix(3).map { ($0.at * 10).rounded() / 10 } == [11, 13.3, 15.3])
    }

    @Test func theShapeIsLearnedAgainWhenTheWatchStartsAgain() throws {
        let seen = run([try ThrottlePolicy(minInterval: 2)], watchRestartAt: 40)
        #expect(seen[0].dropFirst().allSatisfy { $0.location.course == 200 })
        // After the restart, epoch 30 waits for epoch 31 (the new stream's
        // first delivery, at 41); 29 and 30 were alike, so 31 on go out on
        // their receiver's TPV: 33 at 43.3.
        let after = seen[0].filter { $0.at >= 40 }.map { ($0.at * 10).rounded() / 10 }
        #expect(after.prefix(3) == [41, 43.3, 45.3], "\(after)")
    }
}
