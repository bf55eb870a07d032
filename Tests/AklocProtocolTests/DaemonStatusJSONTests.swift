import AklocCore
import AklocJSON
import Testing

@testable import AklocProtocol

@Suite struct DaemonStatusJSONTests {
    static let full = DaemonStatus(
        version: "0.1.0", state: .running, paused: false, uptimeSeconds: 12.5,
        source: .init(name: "gpsd://127.0.0.1:2947", connected: true),
        fix: .init(location: Location(latitude: 52.5, longitude: 13.4, speed: 1.5), ageSeconds: 0.25),
        clients: .init(connected: 2, updating: 1, observing: 1),
        counters: .init(fixesReceived: 9, deliveries: 8, requests: 3),
        mqtt: .init(
            broker: "mqtt://h:1883", topic: "t", tid: "ab", connected: true, queued: 1, queuedBytes: 90,
            oldestQueuedAgeSeconds: 0.5, published: 4, failed: 0, resent: 0, dropped: .init(), lastError: nil))

    static func json(_ status: DaemonStatus) throws -> JSONValue {
        var writer = JSONWriter()
        status.write(to: &writer)
        return try JSONValue.parse(writer.bytes).get()
    }

    @Test func theTextIsSortedAndRoundTrips() throws {
        var writer = JSONWriter()
        Self.full.write(to: &writer)
        let text = String(decoding: writer.bytes, as: UTF8.self)
        #expect(text.hasPrefix(#"{"clients":{"connected":2,"observing":1,"updating":1},"counters":{"badRequests":0,"#))
        #expect(text.hasSuffix(#","state":"running","uptimeSeconds":12.5,"version":"0.1.0"}"#))
        #expect(try DaemonStatus(json: Self.json(Self.full)) == Self.full)
    }

    @Test(
        arguments: [
            ("paused", JSONValue.string("no"), "paused"), ("state", "flying", "state"), ("source", 1, "source"),
            ("clients", ["connected": "2", "updating": 1, "observing": 1], "clients.connected"),
            ("counters", ["deliveries": -1], "counters.deliveries"), ("fix", ["ageSeconds": 1], "fix.location"),
            ("mqtt", ["broker": "b"], "mqtt.dropped"), ("version", nil, "version"),
        ] as [(String, JSONValue, String)])
    func aWrongMemberIsNamed(key: String, value: JSONValue, member: String) throws {
        guard case .object(var members) = try Self.json(Self.full) else { return }
        members[key] = value
        #expect(throws: DaemonStatus.FormatError.self) { try DaemonStatus(json: .object(members)) }
        do {
            _ = try DaemonStatus(json: .object(members))
        } catch {
            #expect(error.member == member, "\(error)")
        }
    }

    @Test func garbageIsAnErrorNotACrash() {
        for value: JSONValue in [nil, 1, "status", [], [:], ["version": "1"]] {
            #expect(throws: DaemonStatus.FormatError.self) { try DaemonStatus(json: value) }
        }
    }
}
