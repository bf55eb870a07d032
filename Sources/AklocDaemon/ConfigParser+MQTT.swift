import AklocCore
import AklocMQTT

/// `[mqtt]` keys (docs/configuration.md). Kept beside the parser's other
/// sections' rules: same strictness, same file:line errors.
extension ConfigParser.State {
    mutating func assignMQTT(_ field: ConfigParser.Field) throws(ConfigError) {
        switch field.key {
        case "enable":
            configuration.mqtt.enabled = try field.boolean()
        case "host":
            configuration.mqtt.hosts = try field.brokerNodes()
        case "port":
            configuration.mqtt.port = UInt16(try field.integer(in: 1...65535, expected: "a port number 1-65535"))
        case "tls":
            configuration.mqtt.tls = try field.boolean()
        case "cafile":
            configuration.mqtt.caFile = try field.absolutePath(
                expected: "an absolute path to a PEM file", maximumBytes: 4095)
        case "certfile":
            configuration.mqtt.certFile = try field.absolutePath(
                expected: "an absolute path to a PEM file", maximumBytes: 4095)
        case "keyfile":
            configuration.mqtt.keyFile = try field.absolutePath(
                expected: "an absolute path to a PEM file", maximumBytes: 4095)
        case "username":
            configuration.mqtt.username = try field.text(expected: "a user name of 1-65535 bytes")
        case "password":
            configuration.mqtt.password = try field.text(expected: "a password of 1-65535 bytes")
        case "password-file":
            configuration.mqtt.passwordFile = try field.absolutePath(
                expected: "an absolute path to a file holding the password", maximumBytes: 4095)
        case "client-id":
            // MQTT 3.1.1 guarantees brokers accept 23 bytes; mosquitto takes more.
            configuration.mqtt.clientID = try field.text(expected: "a client id of 1-65535 bytes")
        case "user":
            configuration.mqtt.user = try field.topicLevel()
        case "device":
            configuration.mqtt.device = try field.topicLevel()
        case "topic":
            guard MQTTSettings.isValidTopic(field.value), !field.value.hasSuffix("/") else {
                throw field.bad("a topic without wildcards (+, #) or a trailing /, such as owntracks/alice/van")
            }
            configuration.mqtt.topic = field.value
        case "tid":
            // OwnTracks shows the tid in a map marker: two characters by convention.
            guard (1...8).contains(field.value.count), !field.value.contains(where: { $0 == " " || $0 == "\t" })
            else { throw field.bad("a tracker id of 1-8 characters, such as \"vn\"") }
            configuration.mqtt.tid = field.value
        case "retain":
            configuration.mqtt.retain = try field.boolean()
        case "qos":
            configuration.mqtt.qos = try field.integer(
                in: 0...1, expected: "0 or 1 (1, the default, is what store-and-forward needs)")
        case "keepalive":
            configuration.mqtt.keepalive = try field.integer(in: 5...65535, expected: "a number of seconds 5-65535")
        case "max-entries":
            configuration.mqtt.limits.maxEntries = try field.integer(
                in: 1...10_000_000, expected: "a number of queued fixes 1-10000000")
        case "max-bytes":
            configuration.mqtt.limits.maxBytes = try field.size(
                in: 65536...(512 << 20),
                expected: "a size in bytes from 64K to 512M (suffixes K, M, G are powers of 1024)")
        case "max-age":
            configuration.mqtt.limits.maxAge = try field.real(
                minimum: 0, exclusive: true, expected: "a number of seconds > 0")
        case "drain-rate":
            let expected = "a number of fixes per second > 0, or unlimited (the default)"
            configuration.mqtt.drainRate =
                field.value == "unlimited"
                ? nil : try field.real(minimum: 0, exclusive: true, maximum: 1_000_000, expected: expected)
        case "protocol":
            guard let setting = MQTTProtocolChoice.Setting(rawValue: field.value) else {
                throw field.bad("auto, 5 or 3.1.1")
            }
            configuration.mqtt.protocolSetting = setting
        case "expire":
            configuration.mqtt.expire = try field.duration(
                expected: "a duration > 0 such as 7d, 12h, 30m or 90s (at most 136 years)")
        case "commands":
            configuration.mqtt.commands = try field.commands()
        case "places-owner":
            configuration.mqtt.placesOwner = UInt32(
                try field.integer(
                    in: 0...4_294_967_294, expected: "a uid (0-4294967294) whose places setWaypoints sets"))
        default:
            throw unknownKey(field)
        }
    }

    /// Settings that are each valid but do not go together.
    func checkMQTT() throws(ConfigError) {
        let mqtt = configuration.mqtt
        if mqtt.password != nil, let line = seen["mqtt.password-file"] {
            throw ConfigError(
                .conflictingValues, path: path, line: line, section: "mqtt", key: "password-file",
                message: "expected password or password-file, not both")
        }
        if (mqtt.password != nil || mqtt.passwordFile != nil) && mqtt.username == nil {
            let line = seen["mqtt.password"] ?? seen["mqtt.password-file"]
            throw ConfigError(
                .conflictingValues, path: path, line: line, section: "mqtt",
                key: mqtt.password != nil ? "password" : "password-file",
                message: "a password needs a username")
        }
        if (mqtt.certFile == nil) != (mqtt.keyFile == nil) {
            let key = mqtt.certFile == nil ? "keyfile" : "certfile"
            throw ConfigError(
                .conflictingValues, path: path, line: seen["mqtt.\(key)"], section: "mqtt", key: key,
                message: "expected certfile and keyfile together")
        }
        for key in ["cafile", "certfile", "keyfile"] where !mqtt.tls {
            if let line = seen["mqtt.\(key)"] {
                throw ConfigError(
                    .conflictingValues, path: path, line: line, section: "mqtt", key: key,
                    message: "only used with tls = yes")
            }
        }
    }
}

extension ConfigParser.Field {
    func boolean() throws(ConfigError) -> Bool {
        switch value {
        case "yes", "true", "on", "1": return true
        case "no", "false", "off", "0": return false
        default: throw bad("yes or no")
        }
    }

    /// A positive duration in seconds, with an optional unit: `s`, `m`, `h`
    /// or `d` (`7d`, `1.5h`, `600`); at most MQTT 5's expiry interval.
    func duration(expected: String) throws(ConfigError) -> Double {
        let units: [(String, Double)] = [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]
        let (suffix, factor) = units.first { value.hasSuffix($0.0) } ?? ("", 1)
        let number = String(value.dropLast(suffix.count))
        var plain = self
        plain.value = number
        let seconds: Double
        do {
            seconds = try plain.real(minimum: 0, exclusive: true, maximum: Double(UInt32.max), expected: expected)
        } catch {
            throw bad(expected)
        }
        guard seconds * factor <= Double(UInt32.max - 1) else { throw bad(expected) }
        return seconds * factor
    }

    /// Free text such as a password: non-empty, within MQTT's string limit.
    /// Control characters never reach here (the lexer rejects them).
    func text(expected: String) throws(ConfigError) -> String {
        guard !value.isEmpty, value.utf8.count <= 65535 else { throw bad(expected) }
        return value
    }

    /// `host[:port]`, or the nodes of one cluster as a comma-separated list
    /// of them, in the order they are tried.
    func brokerNodes() throws(ConfigError) -> [HostPort] {
        let expected = "one or more host[:port] separated by commas, such as n1.example.org, n2.example.org:1884"
        let items = value.split(separator: ",", omittingEmptySubsequences: false)
        guard value.contains(where: { $0 != " " && $0 != "\t" }), items.count <= 64 else { throw bad(expected) }
        var nodes: [HostPort] = []
        for item in items {
            let node: HostPort
            do {
                node = try HostPort(parsing: String(item))
            } catch {
                throw bad("\(expected) (\(error.message))")
            }
            guard !node.host.isEmpty else { throw bad("\(expected) (\"\(item)\" names no host)") }
            guard !nodes.contains(node) else { throw bad("\(expected), each once (\(node) twice)") }
            nodes.append(node)
        }
        return nodes
    }

    /// OwnTracks command names, separated by commas or spaces; each one
    /// akloc carries out (docs/mqtt.md, "Commands").
    func commands() throws(ConfigError) -> Set<OwnTracksCommand.Action> {
        let names = value.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
        var actions: Set<OwnTracksCommand.Action> = []
        for name in names {
            guard let action = OwnTracksCommand.Action(rawValue: String(name)) else {
                let known = OwnTracksCommand.Action.allCases.map(\.rawValue).sorted().joined(separator: ", ")
                throw ConfigError(
                    .badValue, path: path, line: line, section: section, key: key,
                    message: "unknown command \"\(name)\": expected any of \(known), separated by commas")
            }
            actions.insert(action)
        }
        return actions
    }

    /// One level of an MQTT topic: no `/`, wildcards or spaces.
    func topicLevel() throws(ConfigError) -> String {
        guard !value.isEmpty, value.utf8.count <= 255, !value.contains(where: { "/+# \t".contains($0) }) else {
            throw bad("one topic level: no /, +, # or spaces")
        }
        return value
    }
}
