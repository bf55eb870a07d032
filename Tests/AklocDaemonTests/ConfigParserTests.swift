import AklocCore
import Testing

@testable import AklocDaemon

private func parse(_ text: String) throws -> Configuration {
    try ConfigParser.parse(text, path: configPath)
}

@Suite struct ConfigParserTests {
    @Test func emptyFileMeansDefaults() throws {
        let configuration = try parse("")
        #expect(configuration == Configuration())
        #expect(configuration.gpsd.host == "127.0.0.1")
        #expect(configuration.gpsd.port == 2947)
        #expect(configuration.gpsd.device == nil)
        #expect(configuration.throttle.policy == ThrottlePolicy())
        #expect(configuration.throttle.policy.updateSpeed == 0.4)
        #expect(configuration.throttle.policy.minInterval == 5)
        #expect(configuration.throttle.policy.maxInterval == 300)
        #expect(configuration.throttle.policy.distanceFilter == 0)
        #expect(configuration.throttle.policy.desiredAccuracy == 0)
        #expect(configuration.throttle.firstLocationAttempts == 5)
        #expect(configuration.throttle.maxFixAge == 2)
        #expect(configuration.authorization.defaultRule == .whenInUse)
        #expect(configuration.authorization.adminGroup == "akloc-admin")
        #expect(configuration.authorization.rules.isEmpty)
        #expect(configuration.socket.path == "/run/akloc/akloc.sock")
        #expect(configuration.socket.mode == 0o666)
        #expect(configuration.socket.clientHardLimit == 1 << 20)
    }

    @Test func everyKeyIsRead() throws {
        let configuration = try parse(
            """
            # a comment
            ; another comment

            [gpsd]
            host = gps.example.org
            port = 12947
            device = /dev/ttyACM0

            [throttle]
            update-speed = 1.5
            min-interval = 2
            max-interval = 600.5
            distance-filter = 10
            desired-accuracy = 25
            first-location-attempts = 9
            max-fix-age = 0.5

            [authorization]
            default = deny
            admin-group = wheel
            alice = always
            bob = when-in-use
            carol = deny
            @staff = whenInUse

            [socket]
            path = /run/akloc-test/akloc.sock
            mode = 0660
            client-hard-limit = 4M
            """)
        #expect(configuration.gpsd.host == "gps.example.org")
        #expect(configuration.gpsd.port == 12947)
        #expect(configuration.gpsd.device == "/dev/ttyACM0")
        #expect(configuration.gpsd.sourceName == "gpsd://gps.example.org:12947")
        #expect(configuration.throttle.policy.updateSpeed == 1.5)
        #expect(configuration.throttle.policy.minInterval == 2)
        #expect(configuration.throttle.policy.maxInterval == 600.5)
        #expect(configuration.throttle.policy.distanceFilter == 10)
        #expect(configuration.throttle.policy.desiredAccuracy == 25)
        #expect(configuration.throttle.firstLocationAttempts == 9)
        #expect(configuration.throttle.maxFixAge == 0.5)
        #expect(configuration.authorization.defaultRule == .deny)
        #expect(configuration.authorization.adminGroup == "wheel")
        #expect(
            configuration.authorization.rules == [
                .user("alice"): .always, .user("bob"): .whenInUse, .user("carol"): .deny, .group("staff"): .whenInUse,
            ])
        #expect(configuration.socket.path == "/run/akloc-test/akloc.sock")
        #expect(configuration.socket.mode == 0o660)
        #expect(configuration.socket.clientHardLimit == 4 << 20)
    }

    @Test func whitespaceQuotesAndLineEndings() throws {
        let configuration = try parse(
            "\t[ gpsd ]  \r\n  host\t=\t\"::1\"  \r\nport=2948\n[socket]\npath = \"/run/a b/s\"\n")
        #expect(configuration.gpsd.host == "::1")
        #expect(configuration.gpsd.sourceName == "gpsd://[::1]:2948")
        #expect(configuration.gpsd.port == 2948)
        #expect(configFailure("[socket]\npath = \"/run/a\"b\"")?.code == nil)
        #expect(configFailure("[socket]\npath = /run/a b/s")?.code == .badValue, "unquoted spaces are a typo")
    }

    @Test func sectionsCanBeReopened() throws {
        let configuration = try parse("[gpsd]\nhost = a\n[socket]\nmode = 600\n[gpsd]\nport = 1\n")
        #expect(configuration.gpsd.host == "a")
        #expect(configuration.gpsd.port == 1)
        #expect(configuration.socket.mode == 0o600)
    }

    @Test func errorNamesFileLineSectionKeyAndExpectation() {
        let error = configFailure("[throttle]\n\n\n\n\n\n\n\n\n\n\nmin-interval = fast\n")
        #expect(error?.code == .badValue)
        #expect(error?.line == 12)
        #expect(error?.section == "throttle")
        #expect(error?.key == "min-interval")
        #expect(
            error?.description
                == "/etc/akloc/akloc.conf:12: [throttle] min-interval: expected a number of seconds >= 0, got \"fast\""
                + " [badValue]")
    }

    @Test(arguments: [
        ("[gpsd]\nhost = ", "host"), ("[gpsd]\nhost = a b", "host"), ("[gpsd]\nhost = gps;rm", "host"),
        ("[gpsd]\nport = 0", "port"), ("[gpsd]\nport = 65536", "port"), ("[gpsd]\nport = -1", "port"),
        ("[gpsd]\nport = 29a", "port"), ("[gpsd]\nport = 2947.0", "port"),
        ("[gpsd]\nport = 99999999999999999999", "port"),
        ("[gpsd]\ndevice = ttyACM0", "device"), ("[gpsd]\ndevice = ", "device"),
        ("[throttle]\nupdate-speed = -0.1", "update-speed"), ("[throttle]\nupdate-speed = fast", "update-speed"),
        ("[throttle]\nupdate-speed = nan", "update-speed"), ("[throttle]\nupdate-speed = inf", "update-speed"),
        ("[throttle]\nupdate-speed = 0x10", "update-speed"), ("[throttle]\nupdate-speed = 1e3", "update-speed"),
        ("[throttle]\nupdate-speed = .", "update-speed"), ("[throttle]\nupdate-speed = 1.2.3", "update-speed"),
        ("[throttle]\nmin-interval = -1", "min-interval"), ("[throttle]\nmin-interval = 5s", "min-interval"),
        ("[throttle]\nmax-interval = 2000000000", "max-interval"), ("[throttle]\nmax-interval = ", "max-interval"),
        ("[throttle]\ndistance-filter = -5", "distance-filter"),
        ("[throttle]\ndesired-accuracy = x", "desired-accuracy"),
        ("[throttle]\nfirst-location-attempts = 0", "first-location-attempts"),
        ("[throttle]\nfirst-location-attempts = 2.5", "first-location-attempts"),
        ("[throttle]\nmax-fix-age = 0", "max-fix-age"), ("[throttle]\nmax-fix-age = -2", "max-fix-age"),
        // Past what the engine accepts: refused here, with the line, not later without one.
        ("[throttle]\nmax-fix-age = 86400.5", "max-fix-age"), ("[throttle]\nmin-interval = 31622401", "min-interval"),
        ("[throttle]\nmax-interval = 31622401", "max-interval"),
        ("[authorization]\ndefault = yes", "default"), ("[authorization]\ndefault = Always", "default"),
        ("[authorization]\nadmin-group = @wheel", "admin-group"), ("[authorization]\nadmin-group = ", "admin-group"),
        ("[authorization]\nalice = allow", "alice"), ("[authorization]\n@staff = ", "@staff"),
        ("[socket]\npath = relative.sock", "path"), ("[socket]\npath = /" + String(repeating: "a", count: 107), "path"),
        ("[socket]\nmode = 0888", "mode"), ("[socket]\nmode = rw", "mode"), ("[socket]\nmode = 1777", "mode"),
        ("[socket]\nmode = 66", "mode"),
        ("[socket]\nclient-hard-limit = 1K", "client-hard-limit"),
        ("[socket]\nclient-hard-limit = 2G", "client-hard-limit"),
        ("[socket]\nclient-hard-limit = 1T", "client-hard-limit"),
        ("[socket]\nclient-hard-limit = M", "client-hard-limit"),
        ("[gpsd]\nhost = \"127.0.0.1", "host"),
    ])
    func badValuesAreRejected(text: String, key: String) {
        let error = configFailure(text)
        #expect(error?.code == .badValue, "\(text)")
        #expect(error?.key == key)
        #expect(error?.line == 2)
        #expect(error?.description.hasPrefix("/etc/akloc/akloc.conf:2: [") == true || key == "host")
    }

    @Test func goodEdgeValuesAreAccepted() throws {
        #expect(try parse("[gpsd]\nport = 1").gpsd.port == 1)
        #expect(try parse("[gpsd]\nport = 65535").gpsd.port == 65535)
        #expect(try parse("[throttle]\nmin-interval = 0").throttle.policy.minInterval == 0)
        #expect(try parse("[throttle]\nmax-fix-age = 0.001").throttle.maxFixAge == 0.001)
        #expect(try parse("[throttle]\nmax-fix-age = 86400").throttle.maxFixAge == 86400)
        #expect(try parse("[throttle]\nmax-interval = 31622400").throttle.policy.maxInterval == 31_622_400)
        #expect(try parse("[throttle]\nfirst-location-attempts = 1").throttle.firstLocationAttempts == 1)
        #expect(try parse("[socket]\nmode = 600").socket.mode == 0o600)
        #expect(try parse("[socket]\nclient-hard-limit = 65536").socket.clientHardLimit == 65536)
        #expect(try parse("[socket]\nclient-hard-limit = 1 MiB").socket.clientHardLimit == 1 << 20)
        #expect(try parse("[socket]\nclient-hard-limit = 1G").socket.clientHardLimit == 1 << 30)
        #expect(try parse("[authorization]\nbuild$ = deny").authorization.rules[.user("build$")] == .deny)
    }

    @Test func minIntervalAboveMaxIntervalIsAConflict() {
        let both = configFailure("[throttle]\nmin-interval = 60\nmax-interval = 30\n")
        #expect(both?.code == .conflictingValues)
        #expect(both?.line == 3)
        #expect(both?.key == "max-interval")
        #expect(
            both?.description
                == "/etc/akloc/akloc.conf:3: [throttle] max-interval: expected min-interval <= max-interval, "
                + "got min-interval 60 > max-interval 30 [conflictingValues]")
        let againstDefault = configFailure("[throttle]\nmin-interval = 301\n")
        #expect(againstDefault?.code == .conflictingValues)
        #expect(againstDefault?.line == 2)
        #expect(againstDefault?.message.contains("max-interval 300 (default)") == true)
    }

    @Test func unknownSectionsAndKeys() {
        let section = configFailure("[gps]\nhost = a\n")
        #expect(section?.code == .unknownSection)
        #expect(section?.line == 1)
        let key = configFailure("[gpsd]\nhots = a\n")
        #expect(key?.code == .unknownKey)
        #expect(
            key?.description == "/etc/akloc/akloc.conf:2: [gpsd] hots: expected one of host, port, device [unknownKey]")
        #expect(configFailure("[throttle]\nminInterval = 5\n")?.code == .unknownKey)
        #expect(configFailure("[socket]\nowner = root\n")?.code == .unknownKey)
        // Removed: location events are always coalesced, client-hard-limit is the bound.
        #expect(configFailure("[socket]\nclient-queue-limit = 32\n")?.code == .unknownKey)
        #expect(configFailure("[authorization]\nal ice = deny\n")?.code == .unknownKey)
        #expect(configFailure("[authorization]\n-rf = deny\n")?.code == .unknownKey)
    }

    @Test func duplicateKeys() {
        let error = configFailure("[gpsd]\nport = 1\n[throttle]\n[gpsd]\nport = 2\n")
        #expect(error?.code == .duplicateKey)
        #expect(error?.line == 5)
        #expect(error?.message == "already set on line 2")
        #expect(configFailure("[authorization]\nalice = deny\nalice = always\n")?.code == .duplicateKey)
        #expect(configFailure("[authorization]\n@g = deny\ng = always\n") == nil, "a user and a group may share a name")
    }

    @Test func syntaxErrors() {
        let noEquals = configFailure("[gpsd]\nhost 127.0.0.1\n")
        #expect(noEquals?.code == .syntax)
        #expect(noEquals?.line == 2)
        #expect(configFailure("[gpsd]\n= 1\n")?.code == .syntax)
        #expect(configFailure("host = a\n")?.code == .keyOutsideSection)
        #expect(configFailure("[gpsd\nhost = a\n")?.code == .badSectionHeader)
        #expect(configFailure("[gpsd] x\n")?.code == .badSectionHeader)
        #expect(configFailure("[]\n")?.code == .badSectionHeader)
        #expect(configFailure("[")?.code == .badSectionHeader)
        #expect(configFailure("[gpsd]\nport = 1 # the port\n")?.code == .badValue, "comments are whole lines only")
    }

    @Test func garbageBytes() {
        let nul = configFailure(Array("[gpsd]\nhost = a\u{0}b\n".utf8))
        #expect(nul?.code == .invalidCharacter)
        #expect(nul?.line == 2)
        #expect(configFailure(Array("[gpsd]\u{1B}[0m\n".utf8))?.code == .invalidCharacter)
        let utf8 = configFailure(Array("[gpsd]\nhost = ".utf8) + [0xFF, 0xFE] + Array("\n".utf8))
        #expect(utf8?.code == .invalidUTF8)
        #expect(utf8?.line == 2)
        #expect(configFailure(Array("# caf".utf8) + [0xC3])?.code == .invalidUTF8, "a truncated sequence")
        #expect(configFailure("# Zürich ✓\n[gpsd]\n") == nil, "UTF-8 in comments is fine")
    }

    @Test func oversizeFile() {
        let big = [UInt8](repeating: UInt8(ascii: "#"), count: ConfigParser.maximumFileSize + 1)
        let error = configFailure(big)
        #expect(error?.code == .fileTooLarge)
        #expect(error?.line == nil)
        #expect(error?.description.hasPrefix("/etc/akloc/akloc.conf: expected a file of at most 1 MiB") == true)
        #expect(configFailure([UInt8](repeating: UInt8(ascii: "#"), count: ConfigParser.maximumFileSize)) == nil)
    }

    @Test func failedReparseLeavesPreviousConfigurationAlone() throws {
        var current = try parse("[throttle]\nmin-interval = 10\n")
        let before = current
        do {
            current = try parse("[throttle]\nmin-interval = 1\nmax-interval = fast\n")
            Issue.record("the bad config parsed")
        } catch {
            #expect((error as? ConfigError)?.code == .badValue)
        }
        #expect(current == before)
        #expect(current.throttle.policy.minInterval == 10)
        current = try parse("[throttle]\nmin-interval = 1\n")
        #expect(current.throttle.policy.minInterval == 1)
    }

    @Test func ruleResolution() throws {
        let authorization = try parse(
            "[authorization]\nalice = deny\n@staff = always\n@interns = deny\n@field = when-in-use\n"
        ).authorization
        #expect(authorization.rule(forUser: "alice", groups: ["staff"]) == .deny, "a user's own rule wins")
        #expect(authorization.rule(forUser: "bob", groups: ["staff"]) == .always)
        #expect(authorization.rule(forUser: "bob", groups: ["staff", "interns"]) == .deny, "deny wins among groups")
        #expect(authorization.rule(forUser: "bob", groups: ["staff", "field"]) == .whenInUse)
        #expect(authorization.rule(forUser: "dave", groups: ["users"]) == nil)
        #expect(AuthorizationRule.always.status == .authorizedAlways)
        #expect(AuthorizationRule.whenInUse.status == .authorizedWhenInUse)
        #expect(AuthorizationRule.deny.status == .denied)
    }
}
