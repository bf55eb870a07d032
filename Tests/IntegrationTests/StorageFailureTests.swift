import AklocTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension RealUsers {
    /// An acknowledgement means persisted (issue 19): with the state
    /// directory and the config on a really full, or really read-only,
    /// tmpfs, every write the daemon acknowledges (pause, resume, an answer
    /// to requestAuthorization, authorize) is refused with `storageFailed`,
    /// nothing changes in memory or on disk, the daemon keeps serving, and a
    /// restart finds exactly what was acknowledged.
    @Suite(.enabled(if: TestMount.shouldRun, "needs root to mount a tmpfs"))
    struct StorageFailureTests {
        static func message(_ reply: [String: Any]) -> String {
            (reply["error"] as? [String: Any])?["message"] as? String ?? ""
        }

        @Test(arguments: TestMount.Fault.allCases)
        func anAcknowledgedChangeIsOnDiskOrRefused(fault: TestMount.Fault) throws {
            guard AuthorizationStage.requireTools() else { return }
            let mount = try TestMount(sizeKiB: 64)
            defer { mount.unmount() }
            let stage = AuthorizationStage()
            defer { stage.tearDown() }
            let user = try stage.accounts.addUser()
            let stateDirectory = mount.path + "/state"
            let statePath = stateDirectory + "/state.json"
            let configPath = mount.path + "/akloc.conf"
            let config = "[authorization]\ndefault = always\n"
            try config.write(toFile: configPath, atomically: false, encoding: .utf8)
            // No gpsd: these writes do not need fixes, and no location save races them.
            try stage.start(
                config: "", log: nil, extraArguments: ["--state-dir", stateDirectory, "--config", configPath])
            let (root, _) = try stage.connectAsRoot()
            // While there is room everything is acknowledged, and on disk.
            #expect(try root.request("pause").succeeded)
            #expect(try root.request("resume").succeeded)
            let saved = try String(contentsOfFile: statePath, encoding: .utf8)
            #expect(saved.contains("\"paused\" : false"))

            try mount.inject(fault)
            // pause: refused, still running, the file as it was.
            let pause = try root.request("pause")
            #expect(pause.errorCode == "storageFailed", "\(pause)")
            #expect(Self.message(pause).contains(fault.errnoName), "\(pause)")
            #expect(try root.request("get", ["keyPath": "state"])["result"] as? String != "paused")
            #expect((try root.request("status").resultObject)?["paused"] as? Bool == false)
            #expect(try String(contentsOfFile: statePath, encoding: .utf8) == saved)

            // An answer to requestAuthorization: refused, still undecided, not remembered.
            let (client, hello) = try stage.connect(as: user)
            #expect(hello["authorizationStatus"] as? String == "notDetermined")
            let (events, answer) = try client.exchange("requestAuthorization", ["type": "always"])
            #expect(answer.errorCode == "storageFailed", "\(answer)")
            #expect(events.isEmpty, "no notification for a decision that was not made: \(events)")
            #expect(
                try client.request("get", ["keyPath": "authorizationStatus"])["result"] as? String == "notDetermined")
            #expect(try String(contentsOfFile: statePath, encoding: .utf8) == saved)

            // authorize: the config file is not rewritten, the rule not in force.
            let authorize = try root.request("authorize", ["subject": user.name, "status": "deny"])
            #expect(authorize.errorCode == "storageFailed", "\(authorize)")
            #expect(try String(contentsOfFile: configPath, encoding: .utf8) == config)
            let (_, later) = try stage.connect(as: user)
            #expect(later["authorizationStatus"] as? String == "notDetermined", "no deny rule in force")

            // resume, from an acknowledged pause.
            try mount.repair(fault)
            #expect(try root.request("pause").succeeded)
            let pausedFile = try String(contentsOfFile: statePath, encoding: .utf8)
            #expect(pausedFile.contains("\"paused\" : true"))
            try mount.inject(fault)
            let resume = try root.request("resume")
            #expect(resume.errorCode == "storageFailed", "\(resume)")
            #expect(try root.request("get", ["keyPath": "state"])["result"] as? String == "paused")
            #expect(try String(contentsOfFile: statePath, encoding: .utf8) == pausedFile)
            #expect(try client.request("status").succeeded, "the daemon keeps serving everyone")

            let log = stage.daemon!.process.stderr()
            #expect(log.contains(fault.errnoName), "the refusals are logged:\n\(log)")

            // SIGKILL: what comes back is exactly what was acknowledged.
            try mount.repair(fault)
            try stage.daemon!.restart()
            let (after, _) = try stage.connectAsRoot()
            #expect(try after.request("get", ["keyPath": "state"])["result"] as? String == "paused")
            let (again, againHello) = try stage.connect(as: user)
            #expect(againHello["authorizationStatus"] as? String == "notDetermined")
            // And with room, the same requests are acknowledged.
            #expect(try again.request("requestAuthorization", ["type": "always"]).succeeded)
            #expect(try after.request("resume").succeeded)
            #expect(try after.request("authorize", ["subject": user.name, "status": "deny"]).succeeded)
            #expect(try String(contentsOfFile: configPath, encoding: .utf8).contains("\(user.name) = deny"))
            print("\(fault): \(Self.message(pause))")
        }
    }
}
