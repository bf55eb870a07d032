import AklocTestSupport
import Foundation
import Testing

/// `[mqtt] drain-rate` against a real mosquitto (issue 30): a gpsd replay at
/// full speed outruns the rate, so a backlog builds, and it reaches the
/// subscriber no faster than the rate, every fix, in order. The rate is
/// measured from mosquitto_sub's arrival times and printed.
@Suite(.serialized, .enabled(if: MQTTTest.shouldRun, "skipped: \(MQTTTest.missingMessage)"))
struct MQTTDrainRateTests {
    let topic = "owntracks/tester/car"

    @Test func aBacklogDrainsAtTheConfiguredRate() throws {
        guard LiveReplay.requireTools() else { return }
        let rate = 10.0
        let broker = try MosquittoBroker()
        defer { broker.stop() }
        let subscriber = try MQTTSubscriber(port: broker.port, timestamps: true)
        defer { subscriber.stop() }
        try subscriber.waitUntilSubscribed(port: broker.port)
        let replay = try LiveReplay(
            log: "haicom-305N", cycle: nil,
            config: MQTTTest.config(port: broker.port, tid: "ca", extra: "drain-rate = \(Int(rate))"))
        defer { replay.stop() }
        _ = replay.fake.waitForExit(timeout: 60)
        try MQTTTest.waitForReplayEnd(replay.daemon)
        let peak = try MQTTTest.status(replay.daemon)["queued"] as? Int ?? 0
        try MQTTTest.waitForStatus(replay.daemon, timeout: 60, "the backlog to drain") {
            $0["queued"] as? Int == 0 && $0["connected"] as? Bool == true
        }
        let accepted = MQTTTest.accepted(replay.daemon.process.stderr())
        let messages = try subscriber.waitFor(timeout: 20, "\(accepted.count) locations") {
            MQTTTest.locations($0, topic: topic).count >= accepted.count
        }
        let arrivals = messages.filter { $0.topic == topic && $0.json?["_type"] as? String == "location" }
        #expect(arrivals.map(\.payload) == accepted, "every fix, in order")
        #expect(accepted.count > 50)
        #expect(peak > 10, "the replay outran the rate: a backlog built up")
        let times = arrivals.compactMap(\.receivedAt)
        try #require(times.count == arrivals.count && times.count > 1)
        let span = times.last! - times.first!
        let measured = Double(times.count - 1) / span
        // Slots are 1/rate apart when sent; loopback adds no bunching worth
        // 5 % over 70 messages. A loaded machine only makes it slower.
        #expect(measured <= rate * 1.05, "drained at \(measured)/s, faster than \(rate)/s")
        let closest = zip(times.dropFirst(), times).map { $0 - $1 }.min() ?? 0
        print(
            "MQTT drain-rate \(Int(rate))/s: \(accepted.count) fixes, \(peak) queued after the replay, "
                + "drained at \(String(format: "%.2f", measured))/s over \(String(format: "%.2f", span)) s, "
                + "closest two arrivals \(String(format: "%.3f", closest)) s apart")
    }
}
