import AklocTestSupport
import Foundation
import Testing

/// DESIGN §2 Authorization, end to end: real users and groups, clients
/// connected as those users (SO_PEERCRED), the real aklocd reading a real
/// gpsd that replays a capture.
///
/// Serialized: gpsfake feeds 1.4 s after it starts whether or not aklocd is
/// there, and every test makes accounts in the shared passwd database.
@Suite(.serialized, .enabled(if: AuthorizationStage.shouldRun, .init(rawValue: AuthorizationStage.skipMessage)))
struct AuthorizationTests {
    /// Every key path and request that would carry a position.
    static var locationRequests: [(String, [String: Any])] {
        [
            ("get", ["keyPath": "myLocation"]),
            ("get", ["keyPath": "myLocation.coordinate"]),
            ("get", ["keyPath": "rawLocation"]),
            ("get", ["keyPath": "rawLocation.latitude"]),
            ("requestLocation", ["timeout": 2]),
            ("observe", ["keyPath": "myLocation", "options": ["initial"]]),
            ("observe", ["keyPath": "myLocation.latitude"]),
            ("observe", ["keyPath": "rawLocation", "options": ["initial"]]),
        ]
    }

    /// A root client watching every epoch: proves fixes are flowing meanwhile.
    static func reference(_ stage: AuthorizationStage) throws -> SocketClient {
        let (client, hello) = try stage.connectAsRoot()
        #expect(hello["authorizationStatus"] as? String == "authorizedAlways", "root is always authorized")
        #expect(try client.request("observe", ["keyPath": "rawLocation"]).ok)
        return client
    }

    @Test func deniedUserGetsNoLocationAnywhere() throws {
        guard AuthorizationStage.requireTools() else { return }
        let stage = AuthorizationStage()
        defer { stage.tearDown() }
        let user = try stage.accounts.addUser()
        try stage.start(config: "[authorization]\n\(user.name) = deny\n")
        let reference = try Self.reference(stage)

        let (client, hello) = try stage.connect(as: user)
        #expect(hello["authorizationStatus"] as? String == "denied")

        let start = try client.exchange("startUpdatingLocation", ["everyEpoch": true])
        #expect(start.reply.errorCode == "notAuthorized")
        #expect(start.events.map(\.notification) == ["locationManagerNotAuthorized"])

        // Before and after fixes exist, so `get` has something it must not tell.
        for round in ["before the first fix", "with fixes flowing"] {
            if round == "with fixes flowing" { try reference.waitForLocations(3) }
            for (op, arguments) in Self.locationRequests {
                let (events, reply) = try client.exchange(op, arguments)
                #expect(reply.errorCode == "notAuthorized", "\(round): \(op) \(arguments) -> \(reply)")
                #expect(events.isEmpty, "\(round): \(op) \(arguments) sent \(events)")
            }
            let status = try client.request("status")
            #expect(status.ok)
            #expect(status.result?["fix"] == nil, "\(round): status shows a fix to a denied client: \(status)")
        }
        // Already determined: the reply is the status, with no notification.
        let asked = try client.exchange("requestAuthorization", ["type": "always"])
        #expect(asked.reply.result?["authorizationStatus"] as? String == "denied")
        #expect(asked.events.isEmpty)
        // Allowed paths still work, and stay quiet about positions.
        #expect(try client.request("observe", ["keyPath": "state", "options": ["initial"]]).ok)
        #expect(try client.request("get", ["keyPath": "authorizationStatus"])["result"] as? String == "denied")

        // More fixes reach the reference while the denied client is connected and observing.
        try reference.waitForLocations(5)
        #expect(try client.request("status").ok)
        #expect(
            !client.sawLocation, "a denied client received a position:\n\(client.transcript.joined(separator: "\n"))")
        #expect(reference.sawLocation)
    }
}
