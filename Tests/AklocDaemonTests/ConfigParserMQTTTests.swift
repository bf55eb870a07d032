import AklocCore
import AklocMQTT
import Testing

@testable import AklocDaemon

@Suite struct ConfigParserMQTTTests {
    @Test func defaultsAreOffWithQoS1() throws {
        let mqtt = try ConfigParser.parse("", path: configPath).mqtt
        #expect(mqtt == MQTTSettings())
        #expect(!mqtt.enabled)
        #expect(mqtt.qos == 1)
        #expect(mqtt.keepalive == 60)
        #expect(mqtt.policy.minInterval == 30)
        #expect(mqtt.policy.maxInterval == 300)
        #expect(mqtt.limits == ForwardQueue.Limits())
    }

    @Test func everyKeyIsRead() throws {
        let mqtt = try ConfigParser.parse(
            """
            [mqtt]
            enable = yes
            host = broker.example.org
            port = 18883
            tls = yes
            cafile = /etc/akloc/ca.pem
            certfile = /etc/akloc/client.pem
            keyfile = /etc/akloc/client.key
            username = van7
            password-file = /etc/akloc/mqtt-password
            client-id = akloc-van7
            user = fleet
            device = van7
            topic = owntracks/fleet/van7
            tid = v7
            qos = 0
            keepalive = 30
            update-speed = 2
            min-interval = 10
            max-interval = 600
            distance-filter = 25
            max-entries = 5000
            max-bytes = 4M
            max-age = 86400
            """, path: configPath
        ).mqtt
        #expect(mqtt.enabled)
        #expect(mqtt.hosts == [HostPort(host: "broker.example.org")])
        #expect(mqtt.port == 18883)
        #expect(mqtt.tls)
        #expect(mqtt.caFile == "/etc/akloc/ca.pem")
        #expect(mqtt.certFile == "/etc/akloc/client.pem")
        #expect(mqtt.keyFile == "/etc/akloc/client.key")
        #expect(mqtt.username == "van7")
        #expect(mqtt.passwordFile == "/etc/akloc/mqtt-password")
        #expect(mqtt.clientID == "akloc-van7")
        #expect(mqtt.user == "fleet")
        #expect(mqtt.device == "van7")
        #expect(mqtt.topic == "owntracks/fleet/van7")
        #expect(mqtt.tid == "v7")
        #expect(mqtt.qos == 0)
        #expect(mqtt.keepalive == 30)
        #expect(mqtt.policy.updateSpeed == 2)
        #expect(mqtt.policy.minInterval == 10)
        #expect(mqtt.policy.maxInterval == 600)
        #expect(mqtt.policy.distanceFilter == 25)
        #expect(mqtt.limits == ForwardQueue.Limits(maxEntries: 5000, maxBytes: 4 << 20, maxAge: 86400))
    }

    @Test func hostListsTheClusterNodesInOrder() throws {
        let mqtt = try ConfigParser.parse(
            "[mqtt]\nhost = n1.example.org, 127.0.0.1:1884 ,[::1]:1885, fd00::7\nport = 1999\nretain = no\n",
            path: configPath
        ).mqtt
        #expect(
            mqtt.hosts == [
                HostPort(host: "n1.example.org"), HostPort(host: "127.0.0.1", port: 1884),
                HostPort(host: "::1", port: 1885), HostPort(host: "fd00::7"),
            ])
        // A node without a port uses `port`.
        #expect(
            mqtt.nodes.map(\.description) == ["n1.example.org:1999", "127.0.0.1:1884", "[::1]:1885", "[fd00::7]:1999"])
        #expect(!mqtt.retain)
        #expect(MQTTSettings().retain, "retained by default, as OwnTracks apps publish")
    }

    @Test func passwordCanBeQuoted() throws {
        let mqtt = try ConfigParser.parse(
            "[mqtt]\nusername = a\npassword = \"two words\"\n", path: configPath
        ).mqtt
        #expect(mqtt.password == "two words")
    }

    @Test(arguments: [
        ("[mqtt]\nenable = maybe\n", 2, "enable", ConfigError.Code.badValue),
        ("[mqtt]\nport = 0\n", 2, "port", .badValue),
        ("[mqtt]\nqos = 2\n", 2, "qos", .badValue),
        ("[mqtt]\ntopic = owntracks/#\n", 2, "topic", .badValue),
        ("[mqtt]\ntopic = owntracks/a/\n", 2, "topic", .badValue),
        ("[mqtt]\ntid = much-too-long\n", 2, "tid", .badValue),
        ("[mqtt]\nuser = a/b\n", 2, "user", .badValue),
        ("[mqtt]\nkeepalive = 1\n", 2, "keepalive", .badValue),
        ("[mqtt]\nmax-bytes = 10\n", 2, "max-bytes", .badValue),
        ("[mqtt]\nmax-age = 0\n", 2, "max-age", .badValue),
        ("[mqtt]\ncafile = relative.pem\n", 2, "cafile", .badValue),
        ("[mqtt]\nhostname = x\n", 2, "hostname", .unknownKey),
        ("[mqtt]\nhost = a\nhost = b\n", 3, "host", .duplicateKey),
        ("[mqtt]\nhost =\n", 2, "host", .badValue),
        ("[mqtt]\nhost = ,\n", 2, "host", .badValue),
        ("[mqtt]\nhost = a, , b\n", 2, "host", .badValue),
        ("[mqtt]\nhost = a:0\n", 2, "host", .badValue),
        ("[mqtt]\nhost = a:1883, b:65536\n", 2, "host", .badValue),
        ("[mqtt]\nhost = a:1883, b:port\n", 2, "host", .badValue),
        ("[mqtt]\nhost = :1883\n", 2, "host", .badValue),
        ("[mqtt]\nhost = a b\n", 2, "host", .badValue),
        ("[mqtt]\nhost = a:1, a:1\n", 2, "host", .badValue),
        ("[mqtt]\nretain = sometimes\n", 2, "retain", .badValue),
        ("[mqtt]\nmin-interval = 60\nmax-interval = 30\n", 3, "max-interval", .conflictingValues),
        ("[mqtt]\nusername = u\npassword = p\npassword-file = /p\n", 4, "password-file", .conflictingValues),
        ("[mqtt]\npassword = p\n", 2, "password", .conflictingValues),
        ("[mqtt]\ntls = yes\ncertfile = /c.pem\n", 3, "certfile", .conflictingValues),
        ("[mqtt]\ncafile = /ca.pem\n", 2, "cafile", .conflictingValues),
        ("[mqtt]\nenable = yes\ncommands = dump, reportSteps\n", 3, "commands", .badValue),
        ("[mqtt]\ncommands = setConfiguration\n", 2, "commands", .badValue),
        ("[mqtt]\nplaces-owner = alice\n", 2, "places-owner", .badValue),
        ("[mqtt]\ndrain-rate = 0\n", 2, "drain-rate", .badValue),
        ("[mqtt]\ndrain-rate = -5\n", 2, "drain-rate", .badValue),
        ("[mqtt]\ndrain-rate = inf\n", 2, "drain-rate", .badValue),
        ("[mqtt]\ndrain-rate = 2000000\n", 2, "drain-rate", .badValue),
        ("[mqtt]\nprotocol = 4\n", 2, "protocol", .badValue),
        ("[mqtt]\nprotocol = mqtt5\n", 2, "protocol", .badValue),
        ("[mqtt]\nexpire = 0\n", 2, "expire", .badValue),
        ("[mqtt]\nexpire = 7w\n", 2, "expire", .badValue),
        ("[mqtt]\nexpire = -1d\n", 2, "expire", .badValue),
        ("[mqtt]\nexpire = d\n", 2, "expire", .badValue),
        ("[mqtt]\nexpire = 50000d\n", 2, "expire", .badValue),
    ])
    func badSettingsNameTheirLine(text: String, line: Int, key: String, code: ConfigError.Code) throws {
        let error = try #require(configFailure(text))
        #expect(error.code == code)
        #expect(error.line == line)
        #expect(error.section == "mqtt")
        #expect(error.key == key)
        #expect(error.description.hasPrefix("\(configPath):\(line): [mqtt] \(key): "))
    }

    @Test func drainRateIsUnlimitedUntilSet() throws {
        #expect(try ConfigParser.parse("[mqtt]\n", path: configPath).mqtt.drainRate == nil)
        #expect(try ConfigParser.parse("[mqtt]\ndrain-rate = unlimited\n", path: configPath).mqtt.drainRate == nil)
        #expect(try ConfigParser.parse("[mqtt]\ndrain-rate = 2.5\n", path: configPath).mqtt.drainRate == 2.5)
    }

    @Test func protocolAndExpire() throws {
        let defaults = try ConfigParser.parse("[mqtt]\n", path: configPath).mqtt
        #expect(defaults.protocolSetting == .auto)
        #expect(defaults.expire == nil)
        #expect(defaults.sessionExpiry == 604_800, "the session lives as long as max-age")
        let set = try ConfigParser.parse("[mqtt]\nprotocol = 3.1.1\nexpire = 1.5h\n", path: configPath).mqtt
        #expect(set.protocolSetting == .v311)
        #expect(set.expire == 5400)
        #expect(set.sessionExpiry == 5400)
        #expect(set.queueLimits.expire == 5400, "a fix the broker would drop leaves the queue too")
        #expect(set.queueLimits.maxAge == 604_800, "counted as expired, not under max-age")
        for (text, seconds) in [("7d", 604_800.0), ("30m", 1800), ("90s", 90), ("45", 45)] {
            #expect(try ConfigParser.parse("[mqtt]\nexpire = \(text)\n", path: configPath).mqtt.expire == seconds)
        }
        #expect(try ConfigParser.parse("[mqtt]\nprotocol = 5\n", path: configPath).mqtt.protocolSetting == .v5)
    }

    @Test func commandsAreOffUntilNamed() throws {
        #expect(try ConfigParser.parse("[mqtt]\n", path: configPath).mqtt.commands.isEmpty)
        let mqtt = try ConfigParser.parse(
            "[mqtt]\ncommands = reportLocation,waypoints dump , setWaypoints\nplaces-owner = 1000\n", path: configPath
        ).mqtt
        #expect(mqtt.commands == Set(OwnTracksCommand.Action.allCases))
        #expect(mqtt.placesOwner == 1000)
        let error = try #require(configFailure("[mqtt]\ncommands = dump reportSteps\n"))
        #expect(error.description.contains("unknown command \"reportSteps\""))
    }

    @Test func mqttThrottleDoesNotTouchTheDefaultPolicy() throws {
        let configuration = try ConfigParser.parse("[mqtt]\nmin-interval = 1\n", path: configPath)
        #expect(configuration.mqtt.policy.minInterval == 1)
        #expect(configuration.throttle.policy == ThrottlePolicy())
    }
}
