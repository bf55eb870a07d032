import AklocCore
import AklocMQTT
import AklocTestSupport
import Testing

/// The node choice on a manual clock: which node, when, and how many switches.
@Suite struct BrokerFailoverTests {
    private func machine(nodes: Int) -> BrokerFailover {
        BrokerFailover(nodeCount: nodes, backoff: Backoff(initial: 1, maximum: 4, jitter: 0))
    }

    @Test func startsAtTheFirstNodeOnce() {
        let clock = ManualClock()
        var failover = machine(nodes: 3)
        #expect(failover.node == nil)
        #expect(failover.failed(at: clock.now(), unitRandom: 0) == .none)
        #expect(failover.timerFired(at: clock.now()) == .none)
        #expect(failover.start(at: clock.now()) == .connect(node: 0))
        #expect(failover.start(at: clock.now()) == .none)
        #expect(failover.node == 0)
        #expect(failover.switches == 0)
        failover.stop()
        #expect(failover.state == .stopped)
    }

    @Test func aLostNodeMovesToTheNextAtOnceAndStays() {
        let clock = ManualClock()
        var failover = machine(nodes: 3)
        _ = failover.start(at: clock.now())
        failover.connected(at: clock.now())
        #expect(failover.state == .connected(node: 0, since: clock.now()))
        clock.advance(by: 60)
        // Node 0 dies: node 1 now, no wait.
        #expect(failover.failed(at: clock.now(), unitRandom: 0) == .connect(node: 1))
        #expect(failover.switches == 1)
        #expect(failover.failures == 1)
        failover.connected(at: clock.now())
        #expect(failover.failures == 0)
        // Node 1 dies much later: node 2, then round the ring to node 0.
        clock.advance(by: 60)
        #expect(failover.failed(at: clock.now(), unitRandom: 0) == .connect(node: 2))
        failover.connected(at: clock.now())
        #expect(failover.failed(at: clock.now(), unitRandom: 0) == .connect(node: 0))
        #expect(failover.switches == 3)
        #expect(failover.node == 0)
    }

    @Test func aRoundOfFailuresBacksOffThenStartsAtTheNextNode() {
        let clock = ManualClock()
        var failover = machine(nodes: 3)
        _ = failover.start(at: clock.now())
        // Refused by 0 and 1 in turn, immediately.
        #expect(failover.failed(at: clock.now(), unitRandom: 0) == .connect(node: 1))
        #expect(failover.failed(at: clock.now(), unitRandom: 0) == .connect(node: 2))
        // The third in a row completes the round: wait 1 s, then node 0.
        let due = clock.now().advanced(bySeconds: 1)
        #expect(failover.failed(at: clock.now(), unitRandom: 0) == .retry(at: due, delay: 1))
        #expect(failover.state == .waiting(node: 0, until: due))
        // A failure report while waiting changes nothing; an early timer re-arms.
        #expect(failover.failed(at: clock.now(), unitRandom: 0) == .none)
        clock.advance(by: 0.25)
        #expect(failover.timerFired(at: clock.now()) == .retry(at: due, delay: 0.75))
        clock.advance(by: 0.75)
        #expect(failover.timerFired(at: clock.now()) == .connect(node: 0))
        // The second round fails too: the backoff doubles.
        _ = failover.failed(at: clock.now(), unitRandom: 0)
        _ = failover.failed(at: clock.now(), unitRandom: 0)
        #expect(
            failover.failed(at: clock.now(), unitRandom: 0) == .retry(at: clock.now().advanced(bySeconds: 2), delay: 2))
        #expect(failover.failures == 6)
        // A good connection resets it: the next full round waits 1 s again.
        clock.advance(by: 2)
        #expect(failover.timerFired(at: clock.now()) == .connect(node: 0))
        failover.connected(at: clock.now())
        #expect(failover.failed(at: clock.now(), unitRandom: 0) == .connect(node: 1))
        #expect(failover.failed(at: clock.now(), unitRandom: 0) == .connect(node: 2))
        #expect(
            failover.failed(at: clock.now(), unitRandom: 0) == .retry(at: clock.now().advanced(bySeconds: 1), delay: 1))
    }

    @Test func oneNodeBacksOffAfterEveryFailureAndNeverSwitches() {
        let clock = ManualClock()
        var failover = machine(nodes: 1)
        _ = failover.start(at: clock.now())
        failover.connected(at: clock.now())
        var delays: [Double] = []
        for _ in 0..<4 {
            guard case .retry(let due, let delay) = failover.failed(at: clock.now(), unitRandom: 0) else {
                Issue.record("no wait with one node: \(failover.state)")
                return
            }
            delays.append(delay)
            clock.advance(by: delay)
            #expect(clock.now() == due)
            #expect(failover.timerFired(at: clock.now()) == .connect(node: 0))
        }
        #expect(delays == [1, 2, 4, 4])
        #expect(failover.switches == 0)
    }
}
