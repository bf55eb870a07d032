import AklocTestSupport
import Foundation
import Testing

/// The live timeline through the real aklocd on a real gpsd replay: a
/// client that monitors visits gets `didVisit` and the `visit` key path's
/// change as the track records the fixes, and the `visits` op over the same
/// fixes has the same visit (DESIGN §15).
@Suite(.serialized, .enabled(if: GPSDTools.shouldRun, "skipped: \(GPSDTools.missingMessage)"))
struct TimelineLiveTests {
    @Test func aReceiverThatStaysMakesAVisitLiveAndInHistory() throws {
        guard LiveReplay.requireTools() else { return }
        // navisys-gr701w drifts within 65 m for 80 s: a visit once it has
        // stayed min-time (10 s here, so the capture holds one).
        let replay = try LiveReplay(log: "navisys-gr701w", cycle: 0.19, config: "[timeline]\nmin-time = 10\n")
        defer { replay.stop() }
        let (client, _) = try replay.daemon.connect()
        #expect(try client.request("startMonitoringVisits").ok == true)
        let observe = try client.request("observe", ["keyPath": "visit", "options": ["initial"]])
        #expect(observe.ok == true, "\(observe)")
        var visits: [[String: Any]] = []
        var changes: [Any] = []
        _ = try client.waitFor(timeout: 240) { message in
            if message.event == "didVisit", let visit = message["visit"] as? [String: Any] { visits.append(visit) }
            if message.event == "change", message["keyPath"] as? String == "visit" {
                changes.append(message["new"] ?? NSNull())
            }
            return message.notification == "sourceDisconnected"
        }
        let arrival = try #require(visits.first, "no didVisit in the replay")
        #expect(arrival["departure"] == nil, "a visit told at its arrival has no departure")
        #expect((changes.last as? [String: Any])?["arrival"] as? String == arrival["arrival"] as? String)
        let get = try client.request("get", ["keyPath": "visit"])
        #expect((get.result as? [String: Any])?["arrival"] as? String == arrival["arrival"] as? String)
        // The history over the same fixes: the same visit.
        let history = try client.request("visits", ["since": Int(Date().timeIntervalSince1970) - 3600])
        let computed = try #require((history.result as? [String: Any])?["visits"] as? [[String: Any]])
        #expect(computed.map { $0["arrival"] as? String } == visits.map { $0["arrival"] as? String }, "\(computed)")
    }
}
