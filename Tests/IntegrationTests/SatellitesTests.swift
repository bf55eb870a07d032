import AklocTestSupport
import Foundation
import Testing

/// The `satellites` key path through the real aklocd, against real gpsd
/// replaying captures with SKY reports, gpspipe on the same gpsd as the
/// reference (DESIGN §16).
@Suite(.serialized, .enabled(if: GPSDTools.shouldRun, "skipped: \(GPSDTools.missingMessage)"))
struct SatellitesTests {
    /// Replays `log`; returns every `satellites` change an observer with
    /// `minInterval` 0 got, and gpspipe's objects.
    static func replay(_ logPath: String) throws -> (
        seen: [SkySummary], pipe: [[String: Any]], get: Any?, coalesced: Int
    ) {
        let fake = try GPSFake.start(log: logPath)
        defer { fake.stop() }
        let pipe = try GPSPipe(port: fake.port)
        defer { pipe.stop() }
        let daemon = try DaemonProcess(gpsdPort: fake.port)
        defer { daemon.stop() }
        let (client, _) = try daemon.connect()
        let reply = try client.request(
            "observe", ["keyPath": "satellites", "options": ["initial"], "policy": ["minInterval": 0]])
        #expect(reply.ok == true, "\(reply)")
        var seen: [SkySummary] = []
        var last: Any?
        _ = try client.waitFor(timeout: 240) { message in
            if message.event == "change", message["keyPath"] as? String == "satellites" {
                if let sky = SkySummary(akloc: message["new"]) {
                    seen.append(sky)
                    last = message["new"]
                } else {
                    #expect(message["new"] is NSNull, "not a satellites value: \(message)")
                }
            }
            return message.notification == "sourceDisconnected"
        }
        _ = pipe.waitForExit(timeout: 30)
        // The source is gone: its sky is not served any more.
        let get = try client.request("get", ["keyPath": "satellites"])
        #expect(get.result is NSNull, "get after the source went: \(get)")
        // Changes coalesced while the client fell behind (a loaded machine): the only ones it may miss.
        let status = try #require(try client.request("status").result as? [String: Any])
        let coalesced = try #require((status["counters"] as? [String: Any])?["eventsCoalesced"] as? Int)
        return (seen, pipe.objects(), last, coalesced)
    }

    static func logs() -> [String] {
        var logs = ["haicom-305N", "navisys-gr701w"].map(LiveReplay.bundled)
        if let shared = GPSFake.sharedLogDirectory {
            logs += ["mt3339", "ublox-neo-m9n-nmea"].map { shared.appendingPathComponent("\($0).log").path }
        }
        return logs
    }

    @Test(arguments: logs())
    func everySkyChangeMatchesGpspipe(log: String) throws {
        guard LiveReplay.requireTools() else { return }
        let name = URL(fileURLWithPath: log).lastPathComponent
        let (seen, objects, last, coalesced) = try Self.replay(log)
        let reference = SkySummary.changes(in: objects)
        #expect(!reference.isEmpty, "\(name): gpspipe saw no SKY")
        if let mismatch = SkySummary.mismatch(seen, reference: reference, coalesced: coalesced) {
            Issue.record("\(name): \(mismatch)")
        }
        // Every satellite has a constellation name gpsd's gnssid gives, and the
        // counts are the list's.
        if let sky = last as? [String: Any], let satellites = sky["satellites"] as? [[String: Any]] {
            let names = Set(satellites.compactMap { $0["constellation"] as? String })
            #expect(names.isSubset(of: ["GPS", "SBAS", "Galileo", "BeiDou", "IMES", "QZSS", "GLONASS", "NavIC"]))
            #expect(sky["visible"] as? Int == satellites.count)
        }
        print("\(name): \(seen.count) satellites changes, gpspipe \(reference.count) distinct SKYs")
    }

    @Test func getAndBadPathsThroughTheDaemon() throws {
        guard LiveReplay.requireTools() else { return }
        let replay = try LiveReplay(log: "haicom-305N", cycle: 0.02)
        defer { replay.stop() }
        let (client, _) = try replay.daemon.connect()
        _ = try client.request("observe", ["keyPath": "satellites", "policy": ["minInterval": 0]])
        let change = try client.waitFor(timeout: 60) {
            $0.event == "change" && $0["keyPath"] as? String == "satellites"
        }
        #expect(SkySummary(akloc: change["new"]) != nil, "\(change)")
        let get = try client.request("get", ["keyPath": "satellites"])
        #expect(SkySummary(akloc: get.result) != nil, "\(get)")
        for bad in ["satellites.used", "satellites.", "Satellites"] {
            let reply = try client.request("get", ["keyPath": bad])
            #expect(reply.errorCode == "unknownKeyPath", "\(bad): \(reply)")
        }
        let policy = try client.request("observe", ["keyPath": "satellites", "policy": ["minInterval": -1]])
        #expect(policy.errorCode == "badRequest", "\(policy)")
        // The daemon keeps serving.
        #expect(try client.request("get", ["keyPath": "state"]).ok == true)
    }
}
