import AklocTestSupport
import Foundation
import Testing

extension RealUsers {
    /// Saved places per owner with real accounts (issue 11): the owner is the
    /// peer's uid, private places stay private, shared ones need an admin,
    /// and everything derived from the current fix needs authorization.
    @Suite struct PlacesUsersTests {
        @Test func placesBelongToTheirUidAndOnlyAdminsShare() throws {
            guard AuthorizationStage.requireTools() else { return }
            let stage = AuthorizationStage()
            defer { stage.tearDown() }
            let alice = try stage.accounts.addUser()
            let mallory = try stage.accounts.addUser()
            try stage.start(config: "[authorization]\ndefault = deny\n\(alice.name) = always\n", log: nil)
            let (root, _) = try stage.connectAsRoot()
            let at: [String: Any] = ["latitude": 52.7, "longitude": 5.29]
            #expect(try root.request("savePlace", ["name": "Depot", "coordinate": at, "shared": true]).succeeded)
            #expect(try root.request("savePlace", ["name": "Root only", "coordinate": at]).succeeded)

            let (client, _) = try stage.connect(as: alice)
            let shared = try client.request("savePlace", ["name": "Mine", "coordinate": at, "shared": true])
            #expect(shared.errorCode == "forbidden", "\(shared)")
            let saved = try client.request("savePlace", ["name": "Mine", "coordinate": at])
            #expect((saved.resultObject?["place"] as? [String: Any])?["owner"] as? Int == Int(alice.uid))
            // Her own name may repeat a shared one; root's private place is not hers to see or delete.
            #expect(try client.request("savePlace", ["name": "Depot", "coordinate": at, "radius": 5]).succeeded)
            let listed = try #require(try client.request("places").resultObject?["places"] as? [[String: Any]])
            #expect(listed.map { $0["name"] as? String } == ["Mine", "Depot", "Depot"], "\(listed)")
            #expect(listed.map { $0["owner"] as? Int } == [Int(alice.uid), Int(alice.uid), 0])
            #expect(try client.request("deletePlace", ["name": "Root only"]).errorCode == "notFound")
            #expect(try client.request("startMonitoring", ["places": ["Root only"]]).errorCode == "notFound")
            let monitoring = try client.request("startMonitoring")
            #expect(monitoring.resultObject?["places"] as? [String] == ["Mine", "Depot"], "\(monitoring)")
            #expect(try client.request("get", ["keyPath": "regions"])["result"] as? [String] == [])
            let file = stage.daemon!.stateDirectory + "/places/\(alice.uid).json"
            #expect(FileManager.default.fileExists(atPath: file))

            // A denied user: may save a given coordinate, not the current one, and may not monitor.
            let (denied, _) = try stage.connect(as: mallory)
            #expect(try denied.request("savePlace", ["name": "x", "coordinate": at]).succeeded)
            #expect(try denied.request("savePlace", ["name": "here"]).errorCode == "notAuthorized")
            #expect(try denied.request("startMonitoring").errorCode == "notAuthorized")
            #expect(try denied.request("get", ["keyPath": "regions"]).errorCode == "notAuthorized")
            #expect(try denied.request("observe", ["keyPath": "regions"]).errorCode == "notAuthorized")
            let seen = try #require(try denied.request("places").resultObject?["places"] as? [[String: Any]])
            #expect(seen.map { $0["name"] as? String } == ["x", "Depot"])
        }
    }
}

extension CLIAgainstDaemonTests {
    @Test func placesAddListAndRemove() throws {
        let daemon = try DaemonProcess(gpsdPort: nil)
        defer { daemon.stop() }
        let socket = ["--socket", daemon.socketPath]
        let added = try Self.akloc(
            socket + ["places", "add", "Haven", "--at", "52.7033,5.2917", "--radius", "250", "--note", "mooring"])
        #expect(added.code == 0, "\(added)")
        #expect(added.out.hasPrefix("saved Haven  52.70330 N  5.29170 E  250 m  uid "), "\(added.out)")
        #expect(try Self.akloc(socket + ["places", "add", "Depot", "--at=-33.5,151.25", "--shared"]).code == 0)
        let listed = try Self.akloc(socket + ["places"])
        #expect(listed.code == 0)
        #expect(listed.out.split(separator: "\n").map { $0.split(separator: " ").first ?? "" } == ["Haven", "Depot"])
        #expect(listed.out.contains("33.50000 S  151.25000 E  100 m") && listed.out.contains(", shared"))
        #expect(listed.out.contains("— mooring"))
        let json = try Self.akloc(socket + ["places", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any]
        #expect((object?["places"] as? [[String: Any]])?.count == 2)

        // Refused by the CLI (64) or by the daemon (1), and nothing changes.
        for arguments in [
            ["places", "add", "x", "--at", "91,0"], ["places", "add", "x", "--at", "1"],
            ["places", "add", "x", "--radius", "0"],
            ["places", "add"], ["places", "rm"], ["places", "frobnicate"], ["places", "--radius", "5"],
        ] {
            #expect(try Self.akloc(socket + arguments).code == 64, "\(arguments)")
        }
        let long = try Self.akloc(socket + ["places", "add", String(repeating: "n", count: 65), "--at", "1,1"])
        #expect(long.code == 1 && long.err.contains("badRequest") && long.err.contains("name"), "\(long)")
        let far = try Self.akloc(socket + ["places", "add", "x", "--at", "1,1", "--radius", "1e9"])
        #expect(far.code == 1 && far.err.contains("radius"), "\(far)")

        let removed = try Self.akloc(socket + ["places", "rm", "Haven"])
        #expect(removed.code == 0 && removed.out == "removed Haven\n")
        let again = try Self.akloc(socket + ["places", "rm", "Haven"])
        #expect(again.code == 1 && again.err.contains("notFound"), "\(again)")
        #expect(try Self.akloc(socket + ["places"]).out.split(separator: "\n").count == 1)

        // watch regions: monitoring starts, the regions key path prints its current value.
        let watch = try TestProcess(Binaries.akloc, socket + ["watch", "regions"])
        defer { watch.kill() }
        let initial = Self.lines(of: watch, count: 1) { $0.contains("\"regions\"") }
        #expect(initial.first?.contains("\"new\":[]") == true, "\(watch.stdout()) \(watch.stderr())")
        watch.signal(SIGINT)
        #expect(watch.waitForExit(timeout: 10) == 0)
    }
}
