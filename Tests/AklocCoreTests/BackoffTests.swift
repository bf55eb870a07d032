import AklocCore
import Testing

@Suite struct BackoffTests {
    @Test func doublesFrom250MillisecondsUpToTenSeconds() {
        var backoff = Backoff()
        let delays = (0..<10).map { _ in backoff.nextDelay(unitRandom: 0) }
        #expect(delays == [0.25, 0.5, 1, 2, 4, 8, 10, 10, 10, 10])
        #expect(backoff.attempts == 10)
    }

    @Test func jitterStaysWithinBounds() {
        var backoff = Backoff()
        for attempt in 0..<40 {
            let nominal = backoff.nominalDelay(attempt: attempt)
            let unit = Double(attempt % 7) / 7
            let delay = backoff.nextDelay(unitRandom: unit)
            #expect(delay <= nominal)
            #expect(delay >= nominal * 0.8)
            #expect(delay <= 10)
        }
        var high = Backoff()
        do {
            let result = high.nextDelay(unitRandom: 0.999_999)
            #expect(result > 0.2)
        }
        // Out-of-range "random" numbers are clamped, never making the delay exceed the cap.
        var wild = Backoff()
        do {
            let result = wild.nextDelay(unitRandom: -5)
            #expect(result == 0.25)
        }
        do {
            let result = wild.nextDelay(unitRandom: .nan)
            #expect(result == 0.5)
        }
        do {
            let result = wild.nextDelay(unitRandom: 9)
            #expect(result == 0.8)
        }
    }

    @Test func resetStartsOver() {
        var backoff = Backoff()
        for _ in 0..<5 { _ = backoff.nextDelay(unitRandom: 0) }
        backoff.reset()
        #expect(backoff.attempts == 0)
        do {
            let result = backoff.nextDelay(unitRandom: 0)
            #expect(result == 0.25)
        }
    }

    @Test func hugeAttemptCountsDoNotOverflow() {
        #expect(Backoff().nominalDelay(attempt: 10_000) == 10)
    }
}

/// The MQTT forwarder's settings of the same backoff.
@Suite struct BrokerBackoffTests {
    @Test func doublesToTheCap() {
        var backoff = Backoff(initial: 0.5, maximum: 30, jitter: 0.25)
        let delays = (0..<9).map { _ in backoff.nextDelay(unitRandom: 0) }
        #expect(delays == [0.5, 1, 2, 4, 8, 16, 30, 30, 30])
        backoff.reset()
        #expect(backoff.nextDelay(unitRandom: 0) == 0.5)
    }

    @Test func jitterOnlyShortens() {
        var backoff = Backoff(initial: 4, maximum: 30, jitter: 0.25)
        #expect(backoff.nextDelay(unitRandom: 0.999_999) > 3)
        #expect(backoff.nextDelay(unitRandom: 1) == 6)
        #expect(backoff.nextDelay(unitRandom: .nan) == 16)
    }

    @Test func hugeAttemptCountsStayBounded() {
        #expect(Backoff(initial: 0.5, maximum: 30, jitter: 0.25).nominalDelay(attempt: 10_000) == 30)
    }
}
