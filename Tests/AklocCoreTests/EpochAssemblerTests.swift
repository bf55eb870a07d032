import AklocCore
import Testing

/// The epoch rule on a manual clock: gpsd 3.22's split epochs (haicom-305N's
/// shape), single-TPV receivers, the bound, refinements, closing.
@Suite struct EpochAssemblerTests {
    func tpv(
        _ second: Int64?, speed: Double? = nil, course: Double? = nil, altitude: Double? = nil,
        north: Double = 0, device: String? = "/dev/pts/1"
    ) -> Location {
        Location(
            latitude: -27.2 + north / 111_195, longitude: 153.05, altitude: altitude, speed: speed, course: course,
            timestamp: second.map { FixTime(secondsSince1970: 1_800_000_000 + $0) }, device: device)
    }

    @Test func aDeviceNotSeenYetWaitsAndTheNextEpochClosesItMerged() {
        var assembler = EpochAssembler()
        let first = assembler.offer(tpv(0, speed: 9.2), at: .seconds(0))
        #expect(first == EpochAssembler.Step(began: true))
        #expect(!first.onlyJoined, "a new epoch's deadline is news")
        #expect(assembler.deadline == .seconds(1.5))
        let joined = assembler.offer(tpv(0, speed: 0.99, course: 134), at: .seconds(0.3))
        #expect(joined == EpochAssembler.Step())
        #expect(joined.onlyJoined)
        let next = assembler.offer(tpv(1, speed: 11), at: .seconds(0.9))
        #expect(next.began && !next.onlyJoined)
        #expect(next.closed?.fix.speed == 0.99)
        #expect(next.closed?.fix.course == 134)
        #expect(next.closed?.receivedAt == .seconds(0), "an epoch's receipt is its first TPV's")
        #expect(next.closed?.reports == 2)
        // Learned: two TPVs with a track. The estimate alone is not enough...
        #expect(next.completed == nil)
        // ...the receiver's TPV completes it at once.
        let done = assembler.offer(tpv(1, speed: 0, course: 279), at: .seconds(1.2))
        #expect(done.completed?.fix.speed == 0)
        #expect(done.completed?.fix.course == 279)
        #expect(assembler.deadline == nil)
    }

    @Test func theBoundDeliversWhatArrivedWhenNothingElseDoes() {
        var assembler = EpochAssembler(wait: 0.5)
        _ = assembler.offer(tpv(0, speed: 2), at: .seconds(10))
        #expect(assembler.expire(at: .seconds(10.499)) == nil)
        let expired = assembler.expire(at: .seconds(10.5))
        #expect(expired?.fix.speed == 2)
        #expect(assembler.deadline == nil)
        #expect(assembler.expire(at: .seconds(11)) == nil, "delivered once")
        // A late TPV of the same epoch refines it, never delivers it again.
        let late = assembler.offer(tpv(0, speed: 0.5, course: 90), at: .seconds(10.7))
        #expect(late.completed == nil && late.closed == nil)
        #expect(late.refined?.fix.course == 90)
    }

    @Test func aReceiverWithOneTPVPerEpochIsDeliveredOnItsFirstTPV() {
        var assembler = EpochAssembler()
        _ = assembler.offer(tpv(0, speed: 1, course: 10), at: .seconds(0))
        for second in 1...5 {
            let step = assembler.offer(tpv(Int64(second), speed: 1, course: 10), at: .seconds(Double(second)))
            #expect(step.closed == nil || second == 1)
            #expect(step.completed?.fix.timestamp == tpv(Int64(second)).timestamp)
        }
    }

    @Test func aMissingLearnedFieldWaitsEvenWhenTheCountIsReached() {
        var assembler = EpochAssembler()
        _ = assembler.offer(tpv(0, speed: 1, course: 10, altitude: 5), at: .seconds(0))
        // One TPV, like the last epoch, but no altitude yet (bundg_zeus_9's
        // GGA comes late in its cycle).
        let partial = assembler.offer(tpv(1, speed: 1, course: 10), at: .seconds(1))
        #expect(partial.completed == nil)
        let full = assembler.offer(tpv(1, speed: 1, course: 10, altitude: 6, north: 3), at: .seconds(1.8))
        #expect(full.completed?.fix.altitude == 6)
        #expect(full.completed?.fix.latitude == tpv(1, north: 3).latitude, "a later position wins")
        // The next epoch needs two TPVs now; the first alone waits.
        #expect(assembler.offer(tpv(2, speed: 1, course: 10, altitude: 6), at: .seconds(2)).completed == nil)
    }

    @Test func mergingKeepsWhatALaterTPVLacksAndTakesWhatItHas() {
        var assembler = EpochAssembler()
        var first = tpv(0, speed: 9.2, altitude: 3)
        first.horizontalAccuracy = 400
        first.receivedAt = FixTime(secondsSince1970: 42)
        _ = assembler.offer(first, at: .seconds(0))
        var second = tpv(0, speed: 0.99, course: 134)
        second.mode = .twoD
        second.receivedAt = FixTime(secondsSince1970: 43)
        _ = assembler.offer(second, at: .seconds(0.1))
        let merged = assembler.close()
        #expect(merged?.fix.speed == 0.99)
        #expect(merged?.fix.course == 134)
        #expect(merged?.fix.altitude == 3)
        #expect(merged?.fix.horizontalAccuracy == 400)
        #expect(merged?.fix.mode == .twoD)
        #expect(merged?.fix.receivedAt == FixTime(secondsSince1970: 42), "received with its first TPV")
        #expect(assembler.close() == nil)
    }

    @Test func closingDeliversOnlyAnEpochStillCollecting() {
        var assembler = EpochAssembler()
        _ = assembler.offer(tpv(0), at: .seconds(0))
        #expect(assembler.close()?.reports == 1)
        // Learned one TPV: epoch 1 goes out on its first, and closing it gives nothing more.
        #expect(assembler.offer(tpv(1), at: .seconds(1)).completed != nil)
        #expect(assembler.close() == nil)
    }

    @Test func anotherDeviceOrNoTimeIsAnotherEpoch() {
        var assembler = EpochAssembler()
        _ = assembler.offer(tpv(0, speed: 1), at: .seconds(0))
        let other = assembler.offer(tpv(0, speed: 1, device: "/dev/ttyACM0"), at: .seconds(0.1))
        #expect(other.closed?.fix.device == "/dev/pts/1", "same time, other device: the first epoch ends")
        #expect(other.completed == nil, "a device not seen yet waits")
        let untimed = assembler.offer(tpv(nil, speed: 1), at: .seconds(0.2))
        #expect(untimed.closed?.fix.device == "/dev/ttyACM0")
        #expect(untimed.completed?.fix.timestamp == nil, "nothing can join a TPV without a time")
        #expect(assembler.offer(tpv(nil, speed: 1), at: .seconds(0.3)).completed != nil)
    }

    @Test func aTimeThatComesBackLaterIsANewEpoch() {
        // humminbird-M37's clock goes back once: only consecutive TPVs merge.
        var assembler = EpochAssembler()
        _ = assembler.offer(tpv(5), at: .seconds(0))
        #expect(assembler.offer(tpv(6), at: .seconds(1)).completed?.fix.timestamp == tpv(6).timestamp)
        let again = assembler.offer(tpv(5), at: .seconds(2))
        #expect(again.closed == nil, "6 went out already")
        #expect(again.completed?.fix.timestamp == tpv(5).timestamp)
        #expect(again.completed?.reports == 1)
    }
}
