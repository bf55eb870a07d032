import AklocCore
import Testing

/// The reconnect machine on a manual clock: what it says to do, and when.
@Suite struct ReconnectTests {
    private func machine() -> Reconnect { Reconnect(backoff: Backoff(initial: 1, maximum: 4, jitter: 0)) }

    @Test func startConnectsOnceAndStopsIdle() {
        var reconnect = machine()
        #expect(reconnect.state == .stopped)
        #expect(reconnect.failed(at: .zero, unitRandom: 0) == .none)
        #expect(reconnect.timerFired(at: .zero) == .none)
        #expect(reconnect.start(at: .zero) == .connect)
        #expect(reconnect.start(at: .zero) == .none)
        #expect(reconnect.state == .connecting(attempt: 0))
        reconnect.stop()
        #expect(reconnect.state == .stopped)
    }

    @Test func failuresBackOffAndAnnounceOncePerOutage() {
        var reconnect = machine()
        var now = Instant.zero
        _ = reconnect.start(at: now)
        var delays: [Double] = []
        var announced: [Bool] = []
        for _ in 0..<5 {
            guard case .retry(let due, let delay, let announce) = reconnect.failed(at: now, unitRandom: 0) else {
                Issue.record("no retry in \(reconnect.state)")
                return
            }
            delays.append(delay)
            announced.append(announce)
            #expect(due == now.advanced(bySeconds: delay))
            // A second failure report while waiting changes nothing.
            #expect(reconnect.failed(at: now, unitRandom: 0) == .none)
            // Early: armed again for the rest, no attempt yet.
            #expect(
                reconnect.timerFired(at: now.advanced(bySeconds: delay / 2))
                    == .retry(at: due, delay: delay / 2, announce: false))
            now = due
            #expect(reconnect.timerFired(at: now) == .connect)
        }
        #expect(delays == [1, 2, 4, 4, 4])
        #expect(announced == [true, false, false, false, false])
        #expect(reconnect.failures == 5)
    }

    @Test func aGoodConnectionResetsTheBackoffAndTheNextLossIsAnnounced() {
        var reconnect = machine()
        var now = Instant.zero
        _ = reconnect.start(at: now)
        for _ in 0..<3 {
            guard case .retry(let due, _, _) = reconnect.failed(at: now, unitRandom: 0) else { return }
            now = due
            _ = reconnect.timerFired(at: now)
        }
        #expect(reconnect.connected(at: now) == .none)
        #expect(reconnect.state == .connected(since: now))
        #expect(reconnect.isConnected)
        #expect(reconnect.failures == 0)
        // Connected is not connecting: a stray "connected" changes nothing.
        #expect(reconnect.connected(at: now.advanced(bySeconds: 1)) == .none)
        now = now.advanced(bySeconds: 60)
        #expect(
            reconnect.failed(at: now, unitRandom: 0) == .retry(at: now.advanced(bySeconds: 1), delay: 1, announce: true)
        )
        #expect(reconnect.state == .waiting(until: now.advanced(bySeconds: 1), attempt: 1))
    }

    @Test func jitterOnlyShortensTheDelay() {
        var reconnect = Reconnect(backoff: Backoff(initial: 2, maximum: 8, jitter: 0.5))
        _ = reconnect.start(at: .zero)
        #expect(
            reconnect.failed(at: .zero, unitRandom: 0.5) == .retry(at: Instant.seconds(1.5), delay: 1.5, announce: true)
        )
    }

    @Test func stopThenStartBeginsAFreshOutage() {
        var reconnect = machine()
        _ = reconnect.start(at: .zero)
        _ = reconnect.failed(at: .zero, unitRandom: 0)
        reconnect.stop()
        #expect(reconnect.timerFired(at: Instant.seconds(10)) == .none)
        #expect(reconnect.start(at: Instant.seconds(10)) == .connect)
        #expect(
            reconnect.failed(at: Instant.seconds(10), unitRandom: 0)
                == .retry(at: Instant.seconds(11), delay: 1, announce: true))
    }
}
