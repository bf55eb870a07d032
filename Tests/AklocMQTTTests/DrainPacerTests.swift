import AklocCore
import AklocMQTT
import AklocTestSupport
import Testing

/// The drain rate on a manual clock: fixes spaced 1/rate apart, no burst
/// after a pause, no limit without a rate.
@Suite struct DrainPacerTests {
    @Test func withoutARateEverythingGoesAtOnce() {
        let clock = ManualClock()
        var pacer = DrainPacer(rate: nil)
        for _ in 0..<1000 {
            #expect(pacer.decide(at: clock.now()) == .send)
            pacer.sent(at: clock.now())
        }
        #expect(pacer.nextSlot == nil)
    }

    @Test func fixesAreSpacedOneOverTheRateApart() {
        let clock = ManualClock()
        var pacer = DrainPacer(rate: 4)
        #expect(pacer.decide(at: clock.now()) == .send)
        pacer.sent(at: clock.now())
        let slot = clock.now().advanced(bySeconds: 0.25)
        #expect(pacer.decide(at: clock.now()) == .wait(until: slot, delay: 0.25))
        clock.advance(by: 0.1)
        guard case .wait(let until, let delay) = pacer.decide(at: clock.now()) else {
            Issue.record("sent before its slot")
            return
        }
        #expect(until == slot)
        #expect(abs(delay - 0.15) < 1e-9)
        clock.advance(by: 0.15)
        #expect(pacer.decide(at: clock.now()) == .send)

        // A backlog of 400 drains in 100 s, never faster.
        var sent = 0
        let start = clock.now()
        while sent < 400 {
            switch pacer.decide(at: clock.now()) {
            case .send:
                pacer.sent(at: clock.now())
                sent += 1
            case .wait(_, let delay):
                clock.advance(by: delay)
            }
        }
        #expect(abs(clock.now().seconds(since: start) - 99.75) < 1e-6)
    }

    @Test func aLateSendEarnsNoBurst() {
        let clock = ManualClock()
        var pacer = DrainPacer(rate: 1)
        pacer.sent(at: clock.now())
        // The loop comes back 10 s later: one fix now, the next a second after.
        clock.advance(by: 10)
        #expect(pacer.decide(at: clock.now()) == .send)
        pacer.sent(at: clock.now())
        #expect(pacer.decide(at: clock.now()) == .wait(until: clock.now().advanced(bySeconds: 1), delay: 1))
    }
}
