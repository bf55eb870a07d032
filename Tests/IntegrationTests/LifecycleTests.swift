import AklocTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension RealUsers {
    /// DESIGN §2 Lifecycle with the real aklocd and its sd-login monitor.
    /// Session changes themselves are driven through `FakeSessionMonitor` in
    /// `DaemonLifecycleTests` (no logind here to drive); this checks what a
    /// machine without logind does, end to end.
    @Suite struct LifecycleTests {
        /// Without logind (no /run/systemd/users and /run/systemd/system, as
        /// in containers and CI) every uid counts as active: a whenInUse user
        /// gets every epoch and never hears appInBackground, and aklocd says
        /// why, once.
        @Test(.enabled(if: access("/run/systemd/system", F_OK) != 0, "skipped: logind runs here"))
        func withoutLogindWhenInUseUsersAreAlwaysActive() throws {
            guard AuthorizationStage.requireTools() else { return }
            let stage = AuthorizationStage()
            defer { stage.tearDown() }
            let (ruled, asking) = (try stage.accounts.addUser(), try stage.accounts.addUser())
            try stage.start(config: "[authorization]\ndefault = when-in-use\n\(ruled.name) = when-in-use\n")
            _ = try RealUsers.AuthorizationTests.reference(stage)

            let (byRule, ruleHello) = try stage.connect(as: ruled)
            #expect(ruleHello["authorizationStatus"] as? String == "authorizedWhenInUse")
            let (byRequest, _) = try stage.connect(as: asking)
            let granted = try byRequest.request("requestAuthorization", ["type": "always"])
            #expect(granted.resultObject?["authorizationStatus"] as? String == "authorizedWhenInUse")
            for client in [byRule, byRequest] {
                let start = try client.exchange("startUpdatingLocation", ["everyEpoch": true])
                #expect(start.reply.succeeded)
                #expect(try client.request("get", ["keyPath": "myLocation"]).succeeded)
            }
            for client in [byRule, byRequest] {
                let seen = try client.waitForLocations(5)
                #expect(seen.contains { $0.event == "didGetFirstLocation" })
                #expect(!seen.contains { $0.notification == "appInBackground" })
                let status = try client.request("status")
                #expect(status.resultObject?["fix"] != nil, "an active whenInUse client sees the fix in status")
            }
            let log = stage.daemon!.process.stderr()
            #expect(log.components(separatedBy: "no logind here").count - 1 == 1, "logged once:\n\(log)")
        }
    }
}
