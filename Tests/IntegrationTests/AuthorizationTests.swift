import AklocTestSupport
import Foundation
import Testing

extension RealUsers {
    /// DESIGN §2 Authorization, end to end: real users and groups, clients
    /// connected as those users (SO_PEERCRED), the real aklocd reading a real
    /// gpsd that replays a capture.
    @Suite struct AuthorizationTests {
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
        /// Returns once aklocd is connected to gpsd, so clients connected after
        /// it do not see `sourceConnected` among the events a test checks.
        static func reference(_ stage: AuthorizationStage) throws -> SocketClient {
            let (client, hello) = try stage.connectAsRoot()
            #expect(hello["authorizationStatus"] as? String == "authorizedAlways", "root is always authorized")
            #expect(try client.request("observe", ["keyPath": "rawLocation"]).succeeded)
            let connected: ([String: Any]) -> Bool = {
                $0.event == "change" && $0["keyPath"] as? String == "source" && !($0["new"] is NSNull)
            }
            let observed = try client.exchange("observe", ["keyPath": "source", "options": ["initial"]])
            #expect(observed.reply.succeeded)
            if !observed.events.contains(where: connected) { _ = try client.waitFor(timeout: 15, connected) }
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
                    #expect(events.allSatisfy { $0.position == nil }, "\(round): \(op) \(arguments) sent \(events)")
                }
                let status = try client.request("status")
                #expect(status.succeeded)
                #expect(
                    status.resultObject?["fix"] == nil, "\(round): status shows a fix to a denied client: \(status)")
            }
            // Already determined: the reply is the status, with no notification.
            let asked = try client.exchange("requestAuthorization", ["type": "always"])
            #expect(asked.reply.resultObject?["authorizationStatus"] as? String == "denied")
            #expect(asked.events.isEmpty)
            // Allowed paths still work, and stay quiet about positions.
            #expect(try client.request("observe", ["keyPath": "state", "options": ["initial"]]).succeeded)
            #expect(try client.request("get", ["keyPath": "authorizationStatus"])["result"] as? String == "denied")

            // More fixes reach the reference while the denied client is connected and observing.
            try reference.waitForLocations(5)
            #expect(try client.request("status").succeeded)
            #expect(
                !client.sawLocation,
                "a denied client received a position:\n\(client.transcript.joined(separator: "\n"))")
            #expect(reference.sawLocation)
        }

        static let authorizationNotifications: Set<String> = [
            "userAuthorizedWhenInUse", "userAuthorizedAlways", "userAuthorizationDenied", "authorizedWhenInUse",
            "authorizedAlways", "authorizationDenied",
        ]

        struct Grant: Sendable, CustomTestStringConvertible {
            var defaultRule: String
            var type: String
            var status: String
            var userNotification: String
            var notification: String
            var testDescription: String { "default = \(defaultRule), requested \(type) -> \(status)" }
        }

        static let grants = [
            Grant(
                defaultRule: "when-in-use", type: "whenInUse", status: "authorizedWhenInUse",
                userNotification: "userAuthorizedWhenInUse", notification: "authorizedWhenInUse"),
            Grant(
                defaultRule: "when-in-use", type: "always", status: "authorizedWhenInUse",
                userNotification: "userAuthorizedWhenInUse", notification: "authorizedWhenInUse"),
            Grant(
                defaultRule: "always", type: "always", status: "authorizedAlways",
                userNotification: "userAuthorizedAlways", notification: "authorizedAlways"),
            Grant(
                defaultRule: "always", type: "whenInUse", status: "authorizedWhenInUse",
                userNotification: "userAuthorizedWhenInUse", notification: "authorizedWhenInUse"),
            Grant(
                defaultRule: "deny", type: "always", status: "denied",
                userNotification: "userAuthorizationDenied", notification: "authorizationDenied"),
        ]

        /// requestAuthorization answered by `default`, never more than asked: the
        /// exact sequence, the uid's other undecided connection told too, the
        /// decision remembered on reconnect and across a daemon killed and restarted.
        @Test(arguments: grants)
        func requestAuthorizationIsAnsweredByTheDefaultAndRemembered(_ grant: Grant) throws {
            guard AuthorizationStage.requireTools() else { return }
            let stage = AuthorizationStage()
            defer { stage.tearDown() }
            let user = try stage.accounts.addUser()
            try stage.start(config: "[authorization]\ndefault = \(grant.defaultRule)\n")
            let reference = try Self.reference(stage)

            let (client, hello) = try stage.connect(as: user)
            let (sibling, siblingHello) = try stage.connect(as: user)
            #expect(hello["authorizationStatus"] as? String == "notDetermined")
            #expect(siblingHello["authorizationStatus"] as? String == "notDetermined")
            #expect(try client.request("observe", ["keyPath": "authorizationStatus", "options": ["old"]]).succeeded)
            let early = try client.exchange("startUpdatingLocation")
            #expect(early.reply.errorCode == "notAuthorized")
            #expect(early.events.map(\.notification) == ["locationManagerNotAuthorized"])

            let (events, reply) = try client.exchange("requestAuthorization", ["type": grant.type])
            #expect(reply.resultObject?["authorizationStatus"] as? String == grant.status)
            #expect(events.map(\.notification) == [grant.userNotification, grant.notification, nil])
            #expect(events.last?.event == "change" && events.last?["new"] as? String == grant.status)
            #expect(events.last?["old"] as? String == "notDetermined")
            // The uid's other undecided connection gets the plain notification only.
            let told = try sibling.waitFor { Self.authorizationNotifications.contains($0.notification ?? "") }
            #expect(told.notification == grant.notification)
            #expect(try sibling.request("get", ["keyPath": "authorizationStatus"])["result"] as? String == grant.status)

            let authorized = grant.status != "denied"
            let start = try client.exchange("startUpdatingLocation")
            #expect(start.reply.succeeded == authorized, "\(start.reply)")
            if authorized {
                try client.waitForLocations(1)
                try reference.waitForLocations(1)
            } else {
                #expect(start.reply.errorCode == "notAuthorized")
                try reference.waitForLocations(3)
                #expect(try client.request("status").succeeded)
                #expect(!client.sawLocation)
            }

            let (_, again) = try stage.connect(as: user)
            #expect(again["authorizationStatus"] as? String == grant.status, "remembered on reconnect")
            // SIGKILL: the decision must already be on disk, not only flushed at stop.
            try stage.daemon!.restart()
            let (_, afterRestart) = try stage.connect(as: user)
            #expect(afterRestart["authorizationStatus"] as? String == grant.status, "remembered across a restart")
        }

        /// Rules decide at connect: a user's own rule, group rules (deny wins
        /// among groups, the user's own rule wins over them), root always.
        /// Authorized clients get real fixes; requestAuthorization only reports.
        @Test func configuredRulesDecideAtConnect() throws {
            guard AuthorizationStage.requireTools() else { return }
            let stage = AuthorizationStage()
            defer { stage.tearDown() }
            let accounts = stage.accounts
            let (whenInUse, always, viaGroup, deniedGroup, ownRule) = (
                try accounts.addUser(), try accounts.addUser(), try accounts.addUser(), try accounts.addUser(),
                try accounts.addUser()
            )
            let (staff, banned) = (try accounts.addGroup(), try accounts.addGroup())
            for member in [viaGroup, deniedGroup, ownRule] { try accounts.add(member, to: staff) }
            for member in [deniedGroup, ownRule] { try accounts.add(member, to: banned) }
            try stage.start(
                config: """
                    [authorization]
                    default = deny
                    \(whenInUse.name) = when-in-use
                    \(always.name) = always
                    @\(staff.name) = always
                    @\(banned.name) = deny
                    \(ownRule.name) = when-in-use
                    """, log: "haicom-305N")
            // Each client below must hear only what its requests cause, not a late sourceConnected.
            try stage.daemon?.waitUntilSourceConnected()
            let (root, rootHello) = try stage.connectAsRoot()
            #expect(rootHello["authorizationStatus"] as? String == "authorizedAlways")
            #expect(try root.request("startUpdatingLocation", ["everyEpoch": true]).succeeded)

            let expected: [(SystemAccounts.User, String)] = [
                (whenInUse, "authorizedWhenInUse"), (always, "authorizedAlways"), (viaGroup, "authorizedAlways"),
                (deniedGroup, "denied"), (ownRule, "authorizedWhenInUse"),
            ]
            var clients: [(SocketClient, String)] = []
            for (user, status) in expected {
                let (client, hello) = try stage.connect(as: user)
                #expect(hello["authorizationStatus"] as? String == status, "\(user.name)")
                let asked = try client.exchange("requestAuthorization", ["type": "always"])
                #expect(asked.reply.resultObject?["authorizationStatus"] as? String == status)
                #expect(asked.events.isEmpty, "a determined status is only reported")
                let start = try client.exchange("startUpdatingLocation", ["everyEpoch": true])
                #expect(start.reply.succeeded == (status != "denied"), "\(user.name): \(start.reply)")
                clients.append((client, status))
            }
            // Without logind (containers, CI) every uid counts as active, so
            // whenInUse clients get fixes too; with logind these users have no session.
            let noLogind = access("/run/systemd/system", F_OK) != 0
            for (client, status) in clients where status == "authorizedAlways" || (noLogind && status != "denied") {
                try client.waitForLocations(3)
            }
            try root.waitForLocations(3)
            for (client, status) in clients where status == "denied" {
                #expect(try client.request("status").succeeded)
                #expect(!client.sawLocation)
            }
        }

        /// The peer's gid counts as one of its groups (a setgid helper holds
        /// that group's rights), but only for that connection: the same user's
        /// other processes, without the gid, do not inherit its rule.
        @Test func aGroupRuleFollowsTheConnectionsGIDNotTheUser() throws {
            guard AuthorizationStage.requireTools() else { return }
            let stage = AuthorizationStage()
            defer { stage.tearDown() }
            let user = try stage.accounts.addUser()
            let helpers = try stage.accounts.addGroup()  // the user is not a member
            try stage.start(config: "[authorization]\ndefault = deny\n@\(helpers.name) = always\n", log: nil)
            for round in 1...2 {
                let viaHelper = try PeerConnector.connect(stage.socketPath, uid: user.uid, gid: helpers.gid)[0]
                #expect(
                    try viaHelper.readMessage()["authorizationStatus"] as? String == "authorizedAlways",
                    "round \(round)")
                let plain = try stage.connect(as: user)
                #expect(plain.hello["authorizationStatus"] as? String == "notDetermined", "round \(round)")
            }
        }
    }
}
