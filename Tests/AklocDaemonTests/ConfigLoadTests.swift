import AklocTestSupport
import Testing

@testable import AklocDaemon

@Suite struct ConfigLoadTests {
    @Test func missingDefaultFileMeansDefaults() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        let loaded = try ConfigParser.load(explicitPath: nil, defaultPath: directory + "/akloc.conf")
        #expect(!loaded.fileExists)
        #expect(loaded.configuration == Configuration())
        #expect(loaded.path == directory + "/akloc.conf")
    }

    @Test func missingExplicitFileIsAnError() {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        #expect(
            throws: ConfigError(
                .fileNotFound, path: directory + "/x.conf", message: "no such file (named with --config)")
        ) {
            try ConfigParser.load(explicitPath: directory + "/x.conf", defaultPath: directory + "/akloc.conf")
        }
    }

    @Test func explicitFileIsRead() throws {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        writeFile(directory + "/x.conf", "[gpsd]\nport = 3000\n")
        let loaded = try ConfigParser.load(explicitPath: directory + "/x.conf", defaultPath: directory + "/nope.conf")
        #expect(loaded.fileExists)
        #expect(loaded.configuration.gpsd.port == 3000)
    }

    @Test func errorsCarryTheRealPath() {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        writeFile(directory + "/akloc.conf", "[gpsd]\nport = none\n")
        do {
            _ = try ConfigParser.load(explicitPath: nil, defaultPath: directory + "/akloc.conf")
            Issue.record("parsed")
        } catch {
            #expect(error.description.hasPrefix("\(directory)/akloc.conf:2: [gpsd] port: expected a port number"))
        }
    }

    @Test func directoryOrOversizeFileIsRejected() {
        let directory = makeTemporaryDirectory()
        defer { removeTree(directory) }
        #expect(throws: ConfigError.self) { try ConfigParser.load(explicitPath: directory, defaultPath: directory) }
        writeFile(directory + "/big.conf", [UInt8](repeating: UInt8(ascii: "\n"), count: (1 << 20) + 10))
        do {
            _ = try ConfigParser.load(explicitPath: directory + "/big.conf")
            Issue.record("parsed")
        } catch {
            #expect(error.code == .fileTooLarge)
        }
    }

}

@Suite struct ShippedConfigTests {
    private var shippedText: String {
        get throws {
            let path = String(#filePath).replacing(
                "Tests/AklocDaemonTests/ConfigLoadTests.swift", with: "config/akloc.conf")
            return try #require(readFile(path))
        }
    }

    /// The commented-out values document the defaults: uncommenting every
    /// `#key = value` line (except the example rules) must change nothing.
    @Test func documentedValuesAreTheDefaults() throws {
        let examples = ["#alice = always", "#@staff = when-in-use", "#device = /dev/ttyACM0"]
        var keys: Set<String> = []
        let uncommented = try shippedText.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            guard line.hasPrefix("#"), line.contains(" = "), !line.hasPrefix("# "), !examples.contains(String(line))
            else { return String(line) }
            keys.insert(String(line.dropFirst().split(separator: " ")[0]))
            return String(line.dropFirst())
        }.joined(separator: "\n")
        #expect(try ConfigParser.parse(uncommented, path: "akloc.conf") == Configuration())
        // [mqtt] adds 10 key names no other section uses (enable, tls, qos, keepalive, max-*,
        // places-owner, drain-rate, protocol; expire has no default to show), [track] 5 (distance, heartbeat, retention-days, max-size, sync-interval),
        // [timeline] 2 (radius, min-time), [geoclue] 1 (nmea-socket-mode); [geo] data-dir and
        // nmea-socket are example paths, not defaults.
        #expect(keys.count == 14 + 10 + 5 + 2 + 1, "every key but device is shown with its default: \(keys.sorted())")
        // The device example is a real path pin, not a default.
        #expect(try ConfigParser.parse(uncommented + "\n[gpsd]\ndevice = /dev/ttyACM0\n", path: "x").gpsd.device != nil)
    }
}
