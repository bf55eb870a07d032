import AklocTestSupport
import Foundation
import Testing

extension RealUsers {
    /// DESIGN §9: what is derived from the current fix needs `myLocation`'s
    /// authorization; lookups of a given point or code need none. A real
    /// user connected over SO_PEERCRED, a real gpsd replay.
    @Suite struct GeoAuthorizationTests {
        @Test func aDeniedUserMayLookUpPointsButNotTheFix() throws {
            guard AuthorizationStage.requireTools() else { return }
            let stage = AuthorizationStage()
            defer { stage.tearDown() }
            let user = try stage.accounts.addUser()
            try stage.start(config: "[authorization]\n\(user.name) = deny\n" + GeoLookupTests.dataConfig)
            let reference = try AuthorizationTests.reference(stage)
            try reference.waitForLocations(3)

            let (client, hello) = try stage.connect(as: user)
            #expect(hello["authorizationStatus"] as? String == "denied")
            let fixRequests: [(String, [String: Any])] = [
                ("reverseGeocode", [:]),
                ("searchPlaces", ["query": "a"]),
                ("get", ["keyPath": "myPlacemark"]),
                ("get", ["keyPath": "country"]),
                ("get", ["keyPath": "timeZone"]),
                ("observe", ["keyPath": "myPlacemark", "options": ["initial"]]),
                ("observe", ["keyPath": "country", "options": ["initial"]]),
                ("observe", ["keyPath": "timeZone", "options": ["initial"]]),
            ]
            for (op, arguments) in fixRequests {
                let (events, reply) = try client.exchange(op, arguments)
                #expect(reply.errorCode == "notAuthorized", "\(op) \(arguments) -> \(reply)")
                #expect(events.allSatisfy { $0["keyPath"] == nil }, "\(op) \(arguments) sent \(events)")
            }
            #expect(!client.sawLocation, "nothing so far carried a coordinate")
            let point: [String: Any] = ["latitude": 52.72, "longitude": 5.33]
            let given = try client.request("reverseGeocode", ["coordinate": point])
            #expect((given.resultObject?["placemark"] as? [String: Any])?["locality"] as? String == "Enkhuizen")
            #expect(try client.request("searchPlaces", ["query": "enk", "near": point]).succeeded)
            #expect(try client.request("countries", ["code": "nl"]).succeeded)

            // Root, authorized, gets the fix's placemark meanwhile.
            let own = try reference.request("reverseGeocode")
            #expect(own.resultObject?["placemark"] is [String: Any], "\(own)")
        }
    }
}
