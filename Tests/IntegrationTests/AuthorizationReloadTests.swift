import AklocTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Rules changing under live clients (reload, `authorize`), and the admin
/// right (DESIGN §2 Authorization).
extension RealUsers.AuthorizationTests {
    /// A reload re-decides live clients: a user added to an allowed group
    /// (then SIGHUP) hears the plain `authorizedAlways` and gets fixes; a user
    /// whose rule becomes deny (then the `reload` op) hears
    /// `authorizationDenied` and gets no position from that line on.
    @Test func reloadReDecidesLiveClients() throws {
        guard AuthorizationStage.requireTools() else { return }
        let stage = AuthorizationStage()
        defer { stage.tearDown() }
        let (joiner, leaver) = (try stage.accounts.addUser(), try stage.accounts.addUser())
        let staff = try stage.accounts.addGroup()
        func config(leaverRule: String) -> String {
            "[authorization]\ndefault = deny\n@\(staff.name) = always\n\(leaver.name) = \(leaverRule)\n"
        }
        // About 17 s of fixes: enough for both changes to happen mid-replay.
        try stage.start(config: config(leaverRule: "always"), log: "haicom-305N")
        let reference = try Self.reference(stage)

        let (joining, joinHello) = try stage.connect(as: joiner)
        #expect(joinHello["authorizationStatus"] as? String == "notDetermined")
        #expect(try joining.request("observe", ["keyPath": "authorizationStatus", "options": ["old"]]).succeeded)
        let (leaving, leaveHello) = try stage.connect(as: leaver)
        #expect(leaveHello["authorizationStatus"] as? String == "authorizedAlways")
        #expect(try leaving.request("observe", ["keyPath": "rawLocation"]).succeeded)
        #expect(try leaving.request("startUpdatingLocation", ["everyEpoch": true]).succeeded)
        try leaving.waitForLocations(2)

        // Group membership changes take effect at the next reload (aklocd caches NSS answers until then).
        try stage.accounts.add(joiner, to: staff)
        stage.daemon!.process.signal(SIGHUP)
        let told = try joining.collect(timeout: 10) { $0.notification != nil }
        #expect(told.compactMap(\.notification) == ["authorizedAlways"], "the plain notification only")
        let change = try joining.readMessage()
        #expect(change.event == "change" && change["keyPath"] as? String == "authorizationStatus")
        #expect(change["new"] as? String == "authorizedAlways" && change["old"] as? String == "notDetermined")
        #expect(try joining.request("startUpdatingLocation", ["everyEpoch": true]).succeeded)
        try joining.waitForLocations(3)

        try config(leaverRule: "deny").write(toFile: stage.daemon!.configPath, atomically: true, encoding: .utf8)
        let (root, _) = try stage.connectAsRoot()
        #expect(try root.request("reload").succeeded)
        let toldDenied = try leaving.collect { $0.notification == "authorizationDenied" }
        #expect(toldDenied.compactMap(\.notification) == ["authorizationDenied"], "the plain notification only")
        let denied = leaving.transcript.count
        // Fixes go on for the others: none may reach the leaver.
        try reference.waitForLocations(5)
        try joining.waitForLocations(3)
        let status = try leaving.request("status")
        #expect(status.succeeded && status.resultObject?["fix"] == nil)
        #expect(try leaving.request("get", ["keyPath": "myLocation"]).errorCode == "notAuthorized")
        let after = leaving.transcript[denied...]
        #expect(
            !after.contains { $0.contains("\"latitude\"") },
            "a position after authorizationDenied:\n\(after.joined(separator: "\n"))")
        #expect(
            try joining.request("get", ["keyPath": "authorizationStatus"])["result"] as? String == "authorizedAlways")
    }

    /// pause, resume, reload and authorize are refused with `forbidden` to
    /// anyone but root and the admin group; an admin-group member needs no
    /// location authorization to pause, and the pause reaches everyone.
    @Test func controlRequestsNeedRootOrTheAdminGroup() throws {
        guard AuthorizationStage.requireTools() else { return }
        let stage = AuthorizationStage()
        defer { stage.tearDown() }
        let (plain, admin) = (try stage.accounts.addUser(), try stage.accounts.addUser())
        let admins = try stage.accounts.addGroup()
        try stage.accounts.add(admin, to: admins)
        let config = "[authorization]\nadmin-group = \(admins.name)\n\(plain.name) = always\n"
        try stage.start(config: config, log: nil)
        let configPath = stage.daemon!.configPath

        let (root, _) = try stage.connectAsRoot()
        let (plainClient, _) = try stage.connect(as: plain)
        let refused: [(String, [String: Any])] = [
            ("pause", [:]), ("resume", [:]), ("reload", [:]),
            ("authorize", ["subject": plain.name, "status": "deny"]),
            ("authorize", ["subject": "@\(admins.name)", "status": "always"]),
        ]
        for (op, arguments) in refused {
            let reply = try plainClient.request(op, arguments)
            #expect(reply.errorCode == "forbidden", "\(op) by a plain user: \(reply)")
        }
        #expect(try String(contentsOfFile: configPath, encoding: .utf8) == config, "a refused authorize wrote")
        #expect(try root.request("status").resultObject?["paused"] as? Bool == false)

        let (adminClient, adminHello) = try stage.connect(as: admin)
        #expect(adminHello["authorizationStatus"] as? String == "notDetermined", "admin is not location access")
        let paused = try adminClient.exchange("pause")
        #expect(paused.reply.succeeded, "\(paused.reply)")
        #expect(paused.events.contains { $0.notification == "paused" })
        for client in [root, plainClient] { _ = try client.waitFor { $0.notification == "paused" } }
        #expect(try root.request("status").resultObject?["paused"] as? Bool == true)
        #expect(try adminClient.request("reload").succeeded)
        let resumed = try adminClient.exchange("resume")
        #expect(resumed.reply.succeeded, "\(resumed.reply)")
        for client in [root, plainClient] { _ = try client.waitFor { $0.notification == "resumed" } }
        #expect(try plainClient.request("pause").errorCode == "forbidden", "still refused after a reload")

        // An admin may also rewrite rules: here, shutting the plain user out.
        #expect(try adminClient.request("authorize", ["subject": plain.name, "status": "deny"]).succeeded)
        #expect(try String(contentsOfFile: configPath, encoding: .utf8).contains("\n\(plain.name) = deny\n"))
        _ = try plainClient.waitFor { $0.notification == "authorizationDenied" }
    }

    /// `authorize` as root rewrites one rule line of the config file
    /// atomically (comments and order kept), reloads, and live clients hear
    /// the change; the file is what a restarted daemon reads.
    @Test func authorizeRewritesTheConfigAndAppliesItLive() throws {
        guard AuthorizationStage.requireTools() else { return }
        let stage = AuthorizationStage()
        defer { stage.tearDown() }
        let (user, member) = (try stage.accounts.addUser(), try stage.accounts.addUser())
        let team = try stage.accounts.addGroup()
        try stage.accounts.add(member, to: team)
        let original = "# kept as written\n[authorization]\n# no one by default\ndefault = deny\n\n[socket]\n"
        try stage.start(config: original)
        let configPath = stage.daemon!.configPath
        func configText() throws -> String { try String(contentsOfFile: configPath, encoding: .utf8) }
        _ = try Self.reference(stage)

        let (userClient, userHello) = try stage.connect(as: user)
        let (memberClient, memberHello) = try stage.connect(as: member)
        #expect(userHello["authorizationStatus"] as? String == "notDetermined")
        #expect(memberHello["authorizationStatus"] as? String == "notDetermined")
        let (root, _) = try stage.connectAsRoot()

        #expect(try root.request("authorize", ["subject": user.name, "status": "always"]).succeeded)
        #expect(
            try configText()
                == "# kept as written\n[authorization]\n# no one by default\ndefault = deny\n\(user.name) = always\n\n[socket]\n"
        )
        _ = try userClient.waitFor { $0.notification == "authorizedAlways" }
        #expect(try userClient.request("startUpdatingLocation").succeeded)
        try userClient.waitForLocations(1)

        #expect(try root.request("authorize", ["subject": "@\(team.name)", "status": "when-in-use"]).succeeded)
        #expect(try configText().contains("\n@\(team.name) = when-in-use\n"))
        _ = try memberClient.waitFor { $0.notification == "authorizedWhenInUse" }

        // Changing a rule rewrites its line in place.
        #expect(try root.request("authorize", ["subject": user.name, "status": "deny"]).succeeded)
        let text = try configText()
        #expect(text.contains("default = deny\n\(user.name) = deny\n@\(team.name) = when-in-use\n"), "\(text)")
        #expect(!text.contains("\(user.name) = always"))
        _ = try userClient.waitFor { $0.notification == "authorizationDenied" }

        // A bad request changes nothing.
        #expect(try root.request("authorize", ["subject": "not a name", "status": "always"]).errorCode == "badRequest")
        #expect(try root.request("authorize", ["subject": user.name, "status": "sometimes"]).errorCode == "badRequest")
        for reserved in ["default", "admin-group"] {
            let reply = try root.request("authorize", ["subject": reserved, "status": "always"])
            #expect(reply.errorCode == "badRequest", "\(reserved) is a setting, not a user: \(reply)")
        }
        #expect(try configText() == text)

        try stage.daemon!.restart()
        #expect(try stage.connect(as: user).hello["authorizationStatus"] as? String == "denied")
        #expect(try stage.connect(as: member).hello["authorizationStatus"] as? String == "authorizedWhenInUse")
    }
}
