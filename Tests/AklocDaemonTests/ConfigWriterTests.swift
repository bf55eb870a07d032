import AklocTestSupport
import Glibc
import Testing

@testable import AklocDaemon

@Suite struct ConfigWriterTests {
    private func set(_ subject: String, _ rule: AuthorizationRule, in text: String) throws -> String {
        try ConfigWriter.setRule(subject: #require(AuthorizationSubject(subject)), rule: rule, in: text, path: "t.conf")
    }

    @Test func rewritesAnExistingRuleInPlace() throws {
        let text = """
            # people
            [authorization]
            default = deny
              alice   =   deny
            ; keep me
            @staff = always

            [socket]
            mode = 0660
            """
        let result = try set("alice", .always, in: text)
        #expect(result == text.replacing("  alice   =   deny", with: "  alice = always"))
        let group = try set("@staff", .whenInUse, in: result)
        #expect(group.contains("@staff = when-in-use\n"))
        #expect(!group.contains("@staff = always"))
        #expect(
            try ConfigParser.parse(group, path: "t").authorization.rules == [
                .user("alice"): .always, .group("staff"): .whenInUse,
            ])
    }

    @Test func appendsToTheAuthorizationSection() throws {
        let text = "[gpsd]\nport = 2947\n\n[authorization]\n# rules\nbob = deny\n\n\n[socket]\nmode = 0660\n"
        let result = try set("carol", .whenInUse, in: text)
        #expect(
            result
                == "[gpsd]\nport = 2947\n\n[authorization]\n# rules\nbob = deny\ncarol = when-in-use\n\n\n[socket]\nmode = 0660\n"
        )
        let atEnd = try set("dave", .deny, in: "[authorization]\n# none yet\n")
        #expect(atEnd == "[authorization]\n# none yet\ndave = deny\n")
    }

    @Test func createsTheSectionWhenMissing() throws {
        #expect(try set("alice", .always, in: "") == "[authorization]\nalice = always\n")
        #expect(
            try set("alice", .always, in: "[gpsd]\nport = 1") == "[gpsd]\nport = 1\n\n[authorization]\nalice = always\n"
        )
        #expect(
            try set("alice", .always, in: "[gpsd]\r\nport = 1\r\n")
                == "[gpsd]\r\nport = 1\r\n\r\n[authorization]\r\nalice = always\r\n")
    }

    @Test func keepsCRLFLineEndings() throws {
        let result = try set("alice", .deny, in: "[authorization]\r\nalice = always\r\n")
        #expect(result == "[authorization]\r\nalice = deny\r\n")
    }

    @Test func editsTheShippedConfig() throws {
        let path = String(#filePath).replacing(
            "Tests/AklocDaemonTests/ConfigWriterTests.swift", with: "config/akloc.conf")
        let shipped = try #require(readFile(path))
        let result = try set("alice", .always, in: shipped)
        #expect(result.contains("#@staff = when-in-use\nalice = always\n\n[socket]"))
        #expect(result.count == shipped.count + "alice = always\n".count)
    }

    @Test func refusesToEditABrokenFileOrReservedNames() {
        #expect(throws: ConfigError.self) { try set("alice", .always, in: "[authorization]\nalice = maybe\n") }
        #expect(throws: ConfigError.self) { try set("default", .always, in: "") }
        #expect(throws: ConfigError.self) { try set("admin-group", .always, in: "") }
    }

    @Test func writesTheFileAtomicallyKeepingItsMode() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        let path = directory + "/akloc.conf"
        writeFile(path, "# mine\n[authorization]\nalice = deny\n", mode: 0o640)
        let configuration = try ConfigWriter.setRule(subject: .user("alice"), rule: .whenInUse, inFile: path)
        #expect(configuration.authorization.rules[.user("alice")] == .whenInUse)
        #expect(readFile(path) == "# mine\n[authorization]\nalice = when-in-use\n")
        #expect(fileMode(path) == 0o640)
        #expect(directoryEntries(directory) == ["akloc.conf"])

        let fresh = directory + "/new.conf"
        try ConfigWriter.setRule(subject: .group("staff"), rule: .deny, inFile: fresh)
        #expect(readFile(fresh) == "[authorization]\n@staff = deny\n")
        #expect(fileMode(fresh) == 0o644)
    }

    @Test(.enabled(if: getuid() == 0, "only root can hand files to other owners"))
    func ownerAndGroupAreKeptWhenPermitted() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        let path = directory + "/akloc.conf"
        writeFile(path, "[authorization]\n", mode: 0o664)
        chown(path, 65534, 65534)
        try ConfigWriter.setRule(subject: .user("alice"), rule: .deny, inFile: path)
        var info = stat()
        stat(path, &info)
        #expect(info.st_uid == 65534 && info.st_gid == 65534)
        #expect(fileMode(path) == 0o664)
    }

    @Test func aBrokenFileIsLeftUntouched() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        let path = directory + "/akloc.conf"
        writeFile(path, "[authorization]\nalice = perhaps\n")
        do {
            try ConfigWriter.setRule(subject: .user("bob"), rule: .deny, inFile: path)
            Issue.record("edited a broken file")
        } catch {
            #expect(error.code == .badValue)
            #expect(error.line == 2)
        }
        #expect(readFile(path) == "[authorization]\nalice = perhaps\n")
    }

    @Test func unwritableDirectoryIsReported() throws {
        do {
            try ConfigWriter.setRule(subject: .user("bob"), rule: .deny, inFile: "/proc/akloc-test/akloc.conf")
            Issue.record("wrote into /proc")
        } catch {
            #expect(error.code == .writeFailed)
        }
    }
}
