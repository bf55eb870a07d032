import AklocCore
import AklocMQTT
import AklocPosix
import AklocSystemd
import AklocTimeline
import AklocTrack
import Glibc

/// Reads `akloc.conf`. Parsing is pure (bytes in, `Configuration` or
/// `ConfigError` out), which is what makes SIGHUP safe: a bad file is
/// rejected before anything in the running daemon changes.
///
/// Strict by design: unknown sections and keys, duplicates and bad values are
/// errors, not warnings, because a silently ignored typo in an authorization
/// rule is a privacy bug.
public enum ConfigParser {
    /// Anything bigger is not a hand-written config file.
    public static let maximumFileSize = 1 << 20

    public static let sections = [
        "gpsd", "throttle", "authorization", "socket", "mqtt", "geo", "track", "timeline", "geoclue",
    ]

    /// Upper bound for durations, far beyond any sensible setting but small
    /// enough that nanosecond arithmetic on the monotonic clock cannot overflow.
    static let maximumSeconds = 1_000_000_000.0

    /// What `load` found.
    public struct Loaded: Hashable, Sendable {
        public var configuration: Configuration
        public var path: String
        /// False when the default path did not exist and defaults are in use;
        /// the daemon logs that once.
        public var fileExists: Bool
    }

    /// Loads `explicitPath` (from `--config`; it must exist), or the default
    /// path, where a missing file means all defaults.
    public static func load(
        explicitPath: String?, defaultPath: String = Configuration.defaultPath
    ) throws(ConfigError) -> Loaded {
        let path = explicitPath ?? defaultPath
        let bytes: [UInt8]
        do {
            bytes = try FileReader.read(path, limit: maximumFileSize)
        } catch  where error == .noSuchFile {
            guard explicitPath == nil else {
                throw ConfigError(.fileNotFound, path: path, message: "no such file (named with --config)")
            }
            return Loaded(configuration: Configuration(), path: path, fileExists: false)
        } catch {
            throw ConfigError(.unreadable, path: path, message: "cannot read: \(error)")
        }
        return Loaded(configuration: try parse(bytes, path: path), path: path, fileExists: true)
    }

    public static func parse(_ text: String, path: String) throws(ConfigError) -> Configuration {
        try parse(Array(text.utf8), path: path)
    }

    public static func parse(_ bytes: [UInt8], path: String) throws(ConfigError) -> Configuration {
        guard bytes.count <= maximumFileSize else {
            throw ConfigError(
                .fileTooLarge, path: path,
                message: "expected a file of at most 1 MiB (\(maximumFileSize) bytes), got a larger one")
        }
        var parser = State(path: path)
        for line in try ConfigLexer.lines(of: bytes, path: path) {
            try parser.take(line)
        }
        try parser.checkIntervals()
        try parser.checkMQTT()
        return parser.configuration
    }

    struct State {
        let path: String
        var configuration = Configuration()
        var section: String?
        /// "section.key" -> line, for duplicate detection and cross-checks.
        var seen: [String: Int] = [:]

        init(path: String) {
            self.path = path
        }

        mutating func take(_ line: ConfigLexer.Line) throws(ConfigError) {
            switch line.kind {
            case .blank, .comment:
                return
            case .section(let name):
                guard ConfigParser.sections.contains(name) else {
                    throw ConfigError(
                        .unknownSection, path: path, line: line.number,
                        message: "expected one of "
                            + ConfigParser.sections.map { "[\($0)]" }.joined(separator: ", ") + ", got [\(name)]")
                }
                // Reopening a section is allowed; repeating a key is not.
                section = name
            case .assignment(let key, let value, let quoted):
                guard let section else {
                    throw ConfigError(
                        .keyOutsideSection, path: path, line: line.number, key: key,
                        message: "expected a [section] header before the first key")
                }
                let id = "\(section).\(key)"
                if let first = seen[id] {
                    throw ConfigError(
                        .duplicateKey, path: path, line: line.number, section: section, key: key,
                        message: "already set on line \(first)")
                }
                seen[id] = line.number
                let field = Field(
                    path: path, line: line.number, section: section, key: key, value: value, quoted: quoted)
                try assign(field)
            }
        }

        private mutating func assign(_ field: Field) throws(ConfigError) {
            switch field.section {
            case "throttle": if try assignPolicy(field, to: &configuration.throttle.policy) { return }
            case "mqtt": if try assignPolicy(field, to: &configuration.mqtt.policy) { return }
            case "track": if try assignPolicy(field, to: &configuration.track.policy) { return }
            default: break
            }
            switch (field.section, field.key) {
            case ("gpsd", "host"):
                configuration.gpsd.host = try field.host()
            case ("gpsd", "port"):
                configuration.gpsd.port = UInt16(try field.integer(in: 1...65535, expected: "a port number 1-65535"))
            case ("gpsd", "device"):
                configuration.gpsd.device = try field.absolutePath(
                    expected: "an absolute device path such as /dev/ttyACM0", maximumBytes: 4095)
            case ("throttle", "first-location-attempts"):
                configuration.throttle.firstLocationAttempts = try field.integer(
                    in: 1...1_000_000, expected: "a whole number of attempts 1-1000000")
            case ("throttle", "max-fix-age"):
                configuration.throttle.maxFixAge = try field.real(
                    minimum: 0, exclusive: true, maximum: Engine.Configuration.maxFixAgeLimit,
                    expected: "a number of seconds > 0")
            case ("authorization", "default"):
                configuration.authorization.defaultRule = try field.rule()
            case ("authorization", "admin-group"):
                guard AuthorizationSubject.isValidName(field.value) else {
                    throw field.bad("a group name")
                }
                configuration.authorization.adminGroup = field.value
            case ("authorization", _):
                guard let subject = AuthorizationSubject(field.key) else {
                    throw field.unknownKey("default, admin-group, a user name or @group")
                }
                configuration.authorization.rules[subject] = try field.rule()
            case ("socket", "path"):
                configuration.socket.path = try field.socketPath()
            case ("socket", "mode"):
                configuration.socket.mode = try field.octalMode()
            case ("socket", "client-hard-limit"):
                configuration.socket.clientHardLimit = try field.size(
                    in: 65536...(1 << 30),
                    expected: "a size in bytes from 64K to 1G (suffixes K, M, G are powers of 1024)")
            case ("mqtt", _):
                try assignMQTT(field)
            case ("track", _):
                try assignTrack(field)
            case ("timeline", _):
                try assignTimeline(field)
            case ("geo", _):
                try assignGeo(field)
            case ("geoclue", _):
                try assignGeoClue(field)
            default:
                throw unknownKey(field)
            }
        }

        /// `field`'s key is none of its section's `keys`.
        func unknownKey(_ field: ConfigParser.Field) -> ConfigError {
            field.unknownKey("one of \(Self.keys[field.section, default: []].joined(separator: ", "))")
        }

        static let keys: [String: [String]] = [
            "gpsd": ["host", "port", "device"],
            "throttle": [
                "update-speed", "min-interval", "max-interval", "distance-filter", "desired-accuracy",
                "first-location-attempts", "max-fix-age",
            ],
            "socket": ["path", "mode", "client-hard-limit"],
            "mqtt": [
                "enable", "host", "port", "tls", "cafile", "certfile", "keyfile", "username", "password",
                "password-file", "client-id", "user", "device", "topic", "tid", "qos", "keepalive", "min-interval",
                "max-interval", "update-speed", "distance-filter", "max-entries", "max-bytes", "max-age",
                "drain-rate", "protocol", "expire",
            ],
            "track": [
                "enable", "min-interval", "distance", "heartbeat", "retention-days", "max-size", "sync-interval",
            ],
            "timeline": ["radius", "min-time"],
            "geo": ["data-dir"],
            "geoclue": ["enable", "nmea-socket", "nmea-socket-mode"],
        ]
    }

    /// One `key = value` being interpreted.
    struct Field {
        var path: String
        var line: Int
        var section: String
        var key: String
        var value: String
        var quoted: Bool

        func bad(_ expected: String) -> ConfigError {
            ConfigError(
                .badValue, path: path, line: line, section: section, key: key,
                message: "expected \(expected), got \"\(value)\"")
        }

        /// A key its section does not have; `expected` says what it has.
        func unknownKey(_ expected: String) -> ConfigError {
            ConfigError(
                .unknownKey, path: path, line: line, section: section, key: key, message: "expected \(expected)")
        }

        /// Plain decimal notation only: Swift's `Double(_:)` would also take
        /// "inf", "nan" and hex floats, none of which belong in a config file.
        func real(
            minimum: Double, exclusive: Bool = false, maximum: Double = ConfigParser.maximumSeconds, expected: String
        ) throws(ConfigError) -> Double {
            let bytes = Array(value.utf8)
            let digits = bytes.drop(while: { $0 == UInt8(ascii: "-") && bytes.first == $0 })
            guard bytes.count <= 32, !digits.isEmpty,
                digits.allSatisfy({ ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: ".") }),
                digits.filter({ $0 == UInt8(ascii: ".") }).count <= 1,
                digits.contains(where: { $0 != UInt8(ascii: ".") }),
                let number = Double(value), number.isFinite
            else { throw bad(expected) }
            guard exclusive ? number > minimum : number >= minimum else { throw bad(expected) }
            guard number <= maximum else { throw bad("\(expected) and at most \(Int(maximum))") }
            return number
        }

        func integer(in range: ClosedRange<Int>, expected: String) throws(ConfigError) -> Int {
            guard value.utf8.count <= 18, value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let number = Int(value), range.contains(number)
            else { throw bad(expected) }
            return number
        }

        func size(in range: ClosedRange<Int>, expected: String) throws(ConfigError) -> Int {
            let suffixes: [(String, Int)] = [
                ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30),
            ]
            var digits = value
            var multiplier = 1
            for (suffix, factor) in suffixes where value.hasSuffix(suffix) {
                digits = ConfigLexer.trim(String(value.dropLast(suffix.count)))
                multiplier = factor
                break
            }
            guard !digits.isEmpty, digits.utf8.count <= 12,
                digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let number = Int(digits), range.contains(number * multiplier)
            else { throw bad(expected) }
            return number * multiplier
        }

        func octalMode() throws(ConfigError) -> UInt32 {
            let expected = "an octal mode such as 0666 (at most 0777)"
            guard (3...4).contains(value.utf8.count),
                value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "7") }),
                let mode = UInt32(value, radix: 8), mode <= 0o777
            else { throw bad(expected) }
            return mode
        }

        func absolutePath(expected: String, maximumBytes: Int) throws(ConfigError) -> String {
            // Unquoted inner spaces are far more often a typo than a path.
            guard value.hasPrefix("/"), value.utf8.count <= maximumBytes,
                quoted || !value.contains(where: { $0 == " " || $0 == "\t" })
            else { throw bad(expected) }
            return value
        }

        /// A Unix socket's path: absolute, and short enough for `sun_path`.
        func socketPath() throws(ConfigError) -> String {
            let limit = UnixSocketAddress.maxPathLength
            return try absolutePath(expected: "an absolute socket path of at most \(limit) bytes", maximumBytes: limit)
        }

        /// A host name, IPv4 or IPv6 address: `HostPort`'s rule for a host.
        func host() throws(ConfigError) -> String {
            guard HostPort.isValidHost(value) else { throw bad("a host name or IP address") }
            return value
        }

        func rule() throws(ConfigError) -> AuthorizationRule {
            guard let rule = AuthorizationRule(configValue: value) else {
                throw bad("always, when-in-use or deny")
            }
            return rule
        }
    }
}
