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
        // One whole epoch is not a known shape: the second waits for its end too.
        #expect(next.completed == nil)
        #expect(assembler.offer(tpv(1, speed: 0, course: 279), at: .seconds(1.2)).completed == nil)
        #expect(!assembler.knowsShape(of: "/dev/pts/1"))
        let third = assembler.offer(tpv(2, speed: 3.8), at: .seconds(1.9))
        #expect(third.closed?.fix.course == 279 && third.closed?.receivedAt == .seconds(0.9))
        // Two whole epochs alike: known. The estimate alone is not enough...
        #expect(assembler.knowsShape(of: "/dev/pts/1"))
        #expect(third.completed == nil)
        // ...the receiver's TPV completes it at once.
        let done = assembler.offer(tpv(2, speed: 0.89, course: 279), at: .seconds(2.2))
        #expect(done.completed?.fix.speed == 0.89)
        #expect(done.completed?.fix.course == 279)
        #expect(assembler.deadline == nil)
    }

    /// The issue-31 start: gpsd's first epoch after it opens the device has
    /// only its estimate (one TPV, no track), the next ones the estimate and
    /// the receiver's TPV. A shape learned from the first would deliver the
    /// second on its estimate; every epoch goes out with the receiver's track.
    @Test func gpsdsFirstEpochsDoNotTeachATooSmallShape() {
        var assembler = EpochAssembler()
        var delivered: [Location] = []
        func offer(_ fix: Location, _ at: Double) {
            let step = assembler.offer(fix, at: .seconds(at))
            delivered += [step.closed, step.completed].compactMap { $0?.fix }
        }
        offer(tpv(0, speed: 9.2), 0)
        for second in 1...6 {
            offer(tpv(Int64(second), speed: 11), Double(second))
            offer(tpv(Int64(second), speed: Double(second) / 10, course: 90), Double(second) + 0.3)
        }
        delivered += [assembler.close()].compactMap { $0?.fix }
        #expect(delivered.map(\.timestamp) == (0...6).map { tpv(Int64($0)).timestamp })
        #expect(delivered.dropFirst().allSatisfy { $0.course == 90 }, "\(delivered.map(\.course))")
        #expect(delivered.dropFirst().map(\.speed) == (1...6).map { Double($0) / 10 })
        #expect(delivered.first?.course == nil, "the first epoch had no track: it is delivered as gpsd sent it")
    }

    /// bundg_zeus_9 on gpsd 3.22: 12 TPVs in the first epoch, 17 in every
    /// later one, its position in a late one. Learned from the first, the
    /// second would go out at its 12th TPV with the previous second's position.
    @Test func aGrowingStartIsLearnedFromTwoWholeEpochsAlike() {
        var assembler = EpochAssembler()
        var delivered: [(second: Int64, reports: Int, at: Double)] = []
        var clock = 0.0
        func epoch(_ second: Int64, _ count: Int) {
            for index in 0..<count {
                clock += 0.05
                // The RMC-first TPVs carry the previous second's position until the late GGA.
                let north = index >= count - 3 ? Double(second) : Double(second - 1)
                let step = assembler.offer(tpv(second, speed: 3, course: 230, north: north), at: .seconds(clock))
                for epoch in [step.closed, step.completed].compactMap({ $0 }) {
                    let number = epoch.fix.timestamp!.secondsSince1970 - 1_800_000_000
                    #expect(epoch.fix.latitude == tpv(number, north: Double(number)).latitude, "epoch \(number)")
                    delivered.append((number, epoch.reports, clock))
                }
            }
        }
        epoch(0, 12)
        for second in 1...4 { epoch(Int64(second), 17) }
        #expect(delivered.map(\.second) == [0, 1, 2, 3, 4])
        #expect(delivered.map(\.reports) == [12, 17, 17, 17, 17])
        // 0, 1 and 2 wait for the next epoch; 3 and 4 go out on their 17th TPV.
        #expect(assembler.knowsShape(of: "/dev/pts/1"))
        #expect(abs(delivered[3].at - 0.05 * Double(12 + 17 * 3)) < 1e-9, "epoch 3 on its last TPV")
    }

    /// bundg_zeus_9 on gpsd 3.25: four TPVs an epoch, the last with the
    /// track, but at 09:48:50 only three and no track. That one short epoch
    /// must not make the next go out at its third TPV, without its track;
    /// two short ones in a row are the receiver's new shape.
    @Test func oneShortEpochDoesNotShrinkAKnownShape() {
        var assembler = EpochAssembler()
        var clock = 0.0
        var delivered: [(second: Int64, course: Double?, reports: Int)] = []
        func epoch(_ second: Int64, _ count: Int, track: Bool) {
            for index in 0..<count {
                clock += 0.1
                let last = index == count - 1
                let step = assembler.offer(
                    tpv(second, speed: 0.3, course: track && last ? 235 : nil), at: .seconds(clock))
                for epoch in [step.closed, step.completed].compactMap({ $0 }) {
                    let number = epoch.fix.timestamp!.secondsSince1970 - 1_800_000_000
                    delivered.append((number, epoch.fix.course, epoch.reports))
                }
            }
        }
        for second in 0..<4 { epoch(Int64(second), 4, track: true) }
        epoch(4, 3, track: false)
        epoch(5, 4, track: true)
        #expect(delivered.map(\.second) == [0, 1, 2, 3, 4, 5])
        #expect(delivered.last?.course == 235 && delivered.last?.reports == 4, "\(delivered)")
        // Two short epochs in a row: the shape is three TPVs from then on.
        epoch(6, 3, track: false)
        epoch(7, 3, track: false)
        epoch(8, 3, track: false)
        #expect(delivered.map(\.second).suffix(2) == [7, 8])
        #expect(delivered.last?.reports == 3)
        #expect(assembler.deadline == nil, "8 went out on its third TPV")
    }

    @Test func forgettingTheShapesMakesTheNextEpochsWaitForTheirEnd() {
        var assembler = EpochAssembler()
        for second in 0...2 {
            _ = assembler.offer(tpv(Int64(second), speed: 1, course: 10), at: .seconds(Double(second)))
        }
        #expect(assembler.knowsShape(of: "/dev/pts/1"))
        #expect(assembler.offer(tpv(3, speed: 1, course: 10), at: .seconds(3)).completed != nil)
        assembler.forgetShapes()
        #expect(!assembler.knowsShape(of: "/dev/pts/1"))
        let waits = assembler.offer(tpv(4, speed: 1, course: 10), at: .seconds(4))
        #expect(waits.completed == nil && waits.began)
        #expect(assembler.offer(tpv(5, speed: 1, course: 10), at: .seconds(5)).closed?.reports == 1)
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
            // Epochs 0 and 1 teach the shape, each delivered when the next begins.
            #expect((step.closed?.fix.timestamp == tpv(Int64(second - 1)).timestamp) == (second <= 2))
            #expect((step.completed?.fix.timestamp == tpv(Int64(second)).timestamp) == (second >= 2))
        }
    }

    @Test func aMissingLearnedFieldWaitsEvenWhenTheCountIsReached() {
        var assembler = EpochAssembler()
        _ = assembler.offer(tpv(-1, speed: 1, course: 10, altitude: 5), at: .seconds(-1))
        _ = assembler.offer(tpv(0, speed: 1, course: 10, altitude: 5), at: .seconds(0))
        // One TPV, like the last epochs, but no altitude yet (bundg_zeus_9's
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
        #expect(assembler.offer(tpv(1), at: .seconds(1)).completed == nil, "one whole epoch: still learning")
        #expect(assembler.close()?.reports == 1)
        // Two alike: epoch 2 goes out on its first TPV, and closing it gives nothing more.
        #expect(assembler.offer(tpv(2), at: .seconds(2)).completed != nil)
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
        _ = assembler.offer(tpv(4), at: .seconds(-1))
        _ = assembler.offer(tpv(5), at: .seconds(0))
        #expect(assembler.offer(tpv(6), at: .seconds(1)).completed?.fix.timestamp == tpv(6).timestamp)
        let again = assembler.offer(tpv(5), at: .seconds(2))
        #expect(again.closed == nil, "6 went out already")
        #expect(again.completed?.fix.timestamp == tpv(5).timestamp)
        #expect(again.completed?.reports == 1)
    }
}
