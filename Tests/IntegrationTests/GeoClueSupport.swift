import AklocTestSupport
import Foundation
import Testing

/// DESIGN §12 end to end: a private system bus, real gpsd replaying a
/// capture in a loop, gpspipe beside aklocd as the reference, and aklocd
/// with `[geoclue]` on that bus. Everything is stopped by `tearDown`.
final class GeoClueStage {
    static let whereAmI = "/usr/libexec/geoclue-2.0/demos/where-am-i"
    static let python = "/usr/bin/python3"
    static let log = "humminbird-M37"

    static var missing: [String] {
        var missing = PrivateSystemBus.missing + GPSDTools.missing
        if access(whereAmI, X_OK) != 0 { missing.append("where-am-i (geoclue-2-demo)") }
        let dbusPython = Process()
        dbusPython.executableURL = URL(fileURLWithPath: python)
        dbusPython.arguments = ["-c", "import dbus"]
        dbusPython.standardError = FileHandle.nullDevice
        if (try? dbusPython.run()) == nil {
            missing.append("python3")
        } else {
            dbusPython.waitUntilExit()
            if dbusPython.terminationStatus != 0 { missing.append("python3-dbus") }
        }
        return missing
    }
    static let missingTools = missing
    static var required: Bool { ProcessInfo.processInfo.environment["AKLOC_REQUIRE_TOOLS"] == "1" }
    static var shouldRun: Bool { missingTools.isEmpty || required }
    static var skipMessage: String { "skipped: needs \(missingTools.joined(separator: ", "))" }

    /// False (with a recorded failure) when the tools are required but missing.
    static func requireTools() -> Bool {
        guard missingTools.isEmpty else {
            Issue.record("AKLOC_REQUIRE_TOOLS=1 and missing: \(missingTools.joined(separator: ", "))")
            return false
        }
        return true
    }

    let bus: PrivateSystemBus
    let fake: GPSFake
    let pipe: GPSPipe
    let daemon: DaemonProcess
    let nmeaPath: String

    /// `config` is added after `[geoclue]`'s own lines.
    init(config: String = "", enable: Bool = true) throws {
        bus = try PrivateSystemBus()
        let nmeaDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-nmea-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: nmeaDirectory, withIntermediateDirectories: true)
        nmeaPath = nmeaDirectory.appendingPathComponent("nmea.sock").path
        do {
            fake = try GPSFake.start(log: GPSFake.bundledLog(Self.log), cycle: 0.1, loop: true)
        } catch {
            bus.stop()
            throw error
        }
        pipe = try GPSPipe(port: fake.port)
        do {
            daemon = try DaemonProcess(
                gpsdPort: fake.port,
                config: "[geoclue]\nenable = \(enable ? "yes" : "no")\nnmea-socket = \(nmeaPath)\n" + config,
                environment: bus.environment)
        } catch {
            pipe.stop()
            fake.stop()
            bus.stop()
            throw error
        }
    }

    func tearDown() {
        daemon.stop()
        pipe.stop()
        fake.stop()
        bus.stop()
        try? FileManager.default.removeItem(atPath: (nmeaPath as NSString).deletingLastPathComponent)
    }

    /// Every distinct (latitude, longitude) gpsd has reported to gpspipe so
    /// far (the replay loops, so there are few). Parsing gpspipe's output is
    /// not cheap: take it once, after the clients under test are done.
    func referencePositions() -> [(Double, Double)] {
        var seen: Set<[Double]> = []
        return pipe.tpvs().compactMap { tpv in
            guard let lat = tpv["lat"] as? Double, let lon = tpv["lon"] as? Double, seen.insert([lat, lon]).inserted
            else { return nil }
            return (lat, lon)
        }
    }

    /// Whether (latitude, longitude) is within `tolerance` of a fix in `reference`.
    static func isReplayed(
        _ latitude: Double, _ longitude: Double, in reference: [(Double, Double)], tolerance: Double = 1e-6
    ) -> Bool {
        reference.contains { abs($0.0 - latitude) <= tolerance && abs($0.1 - longitude) <= tolerance }
    }

    /// `command` on the private bus, as `user` (through setpriv, no
    /// supplementary groups) when given.
    func launch(_ command: [String], as user: SystemAccounts.User?) throws -> TestProcess {
        guard let user else {
            return try TestProcess(command[0], Array(command.dropFirst()), environment: bus.environment)
        }
        return try TestProcess(
            TestProcess.which("setpriv") ?? "/usr/bin/setpriv",
            ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "--"] + command,
            environment: bus.environment)
    }

    /// Whether aklocd has said it owns the name (bounded wait).
    func servesTheName(timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if daemon.process.stderr().contains("serving org.freedesktop.GeoClue2 on the system bus") { return true }
            usleep(50_000)
        }
        return false
    }

    /// GeoClue's own client for `seconds`, with its options.
    func startWhereAmI(_ arguments: [String] = [], seconds: Int, as user: SystemAccounts.User? = nil) throws
        -> TestProcess
    {
        let command = [Self.whereAmI, "-t", String(seconds)] + arguments
        return try launch(command, as: user)
    }

    /// `gdbus call` on the private bus; its stdout, or a failure with stderr.
    func gdbus(_ arguments: [String]) throws -> String {
        let process = try TestProcess(
            "gdbus", ["call", "--system", "--dest", "org.freedesktop.GeoClue2"] + arguments,
            environment: bus.environment)
        guard process.waitForExit(timeout: 10) == 0 else {
            throw SocketClient.Failure("gdbus \(arguments) failed: \(process.stderr())")
        }
        return process.stdout()
    }

    /// A property read with `gdbus` (its GVariant text, e.g. "(<uint32 8>,)").
    func property(_ path: String, _ interface: String, _ name: String) throws -> String {
        try gdbus([
            "--object-path", path, "--method", "org.freedesktop.DBus.Properties.Get",
            "org.freedesktop.GeoClue2.\(interface)", name,
        ]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Client object paths now on the bus, from `busctl tree`.
    func clientPaths() throws -> [String] {
        let process = try TestProcess(
            "busctl", ["--system", "--list", "tree", "org.freedesktop.GeoClue2"], environment: bus.environment)
        guard process.waitForExit(timeout: 10) == 0 else {
            throw SocketClient.Failure("busctl tree failed: \(process.stderr())")
        }
        let prefix = "/org/freedesktop/GeoClue2/Client/"
        return process.stdout().split(whereSeparator: \.isNewline).map(String.init).filter {
            $0.hasPrefix(prefix) && !$0.dropFirst(prefix.count).contains("/")
        }
    }

    /// A D-Bus client in Python (dbus-python, no GeoClue library): makes
    /// `count` clients with CreateClient, sets their properties, starts them,
    /// then for `seconds` prints each new Location as one JSON line per
    /// client and update; a failed Start prints {"error": NAME}.
    static let pythonClient = """
        import dbus, json, sys, time
        count, level, time_threshold, distance, seconds = (int(a) for a in sys.argv[1:6])
        bus = dbus.SystemBus()
        name = "org.freedesktop.GeoClue2"
        manager = dbus.Interface(bus.get_object(name, "/org/freedesktop/GeoClue2/Manager"),
                                 "org.freedesktop.GeoClue2.Manager")
        clients = []
        for i in range(count):
            path = manager.CreateClient()
            props = dbus.Interface(bus.get_object(name, path), "org.freedesktop.DBus.Properties")
            iface = "org.freedesktop.GeoClue2.Client"
            props.Set(iface, "DesktopId", "akloc-test")
            props.Set(iface, "RequestedAccuracyLevel", dbus.UInt32(level))
            props.Set(iface, "TimeThreshold", dbus.UInt32(time_threshold))
            props.Set(iface, "DistanceThreshold", dbus.UInt32(distance))
            try:
                dbus.Interface(bus.get_object(name, path), iface).Start()
            except dbus.exceptions.DBusException as error:
                print(json.dumps({"client": str(path), "error": error.get_dbus_name(), "message": str(error)}))
                sys.stdout.flush()
                continue
            clients.append((str(path), props))
        seen = {}
        deadline = time.time() + seconds
        while time.time() < deadline and clients:
            for path, props in clients:
                location = str(props.Get("org.freedesktop.GeoClue2.Client", "Location"))
                if location == "/" or seen.get(path) == location:
                    continue
                seen[path] = location
                values = dbus.Interface(bus.get_object(name, location), "org.freedesktop.DBus.Properties").GetAll(
                    "org.freedesktop.GeoClue2.Location")
                print(json.dumps({"client": path, "location": location,
                                  "lat": float(values["Latitude"]), "lon": float(values["Longitude"]),
                                  "accuracy": float(values["Accuracy"]), "altitude": float(values["Altitude"]),
                                  "speed": float(values["Speed"]), "heading": float(values["Heading"]),
                                  "time": int(values["Timestamp"][0]) + int(values["Timestamp"][1]) / 1e6}))
                sys.stdout.flush()
            time.sleep(0.1)
        """

    func startPythonClient(
        count: Int = 1, level: UInt32 = 8, timeThreshold: UInt32 = 0, distanceThreshold: UInt32 = 0, seconds: Int,
        as user: SystemAccounts.User? = nil
    ) throws -> TestProcess {
        let command =
            [Self.python, "-I", "-c", Self.pythonClient]
            + [count, Int(level), Int(timeThreshold), Int(distanceThreshold), seconds].map(String.init)
        return try launch(command, as: user)
    }

    /// The JSON lines a Python client printed.
    static func lines(_ process: TestProcess) -> [[String: Any]] {
        process.stdout().split(whereSeparator: \.isNewline).compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }
}

/// One location where-am-i printed.
struct WhereAmILocation {
    var latitude: Double
    var longitude: Double
    var accuracy: Double
    var timestamp: Int?

    /// Every "New location:" block in where-am-i's output.
    static func parse(_ output: String) -> [WhereAmILocation] {
        output.components(separatedBy: "New location:").dropFirst().compactMap { block in
            func value(_ label: String) -> Double? {
                guard let line = block.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix(label) })
                else { return nil }
                let text = line.dropFirst(label.count).trimmingCharacters(in: .whitespaces)
                return Double(text.prefix { "-0123456789.".contains($0) })
            }
            guard let latitude = value("Latitude:"), let longitude = value("Longitude:"),
                let accuracy = value("Accuracy:")
            else { return nil }
            let timestamp = block.range(of: "(").flatMap { range in
                Int(block[range.upperBound...].prefix { $0.isNumber })
            }
            return WhereAmILocation(latitude: latitude, longitude: longitude, accuracy: accuracy, timestamp: timestamp)
        }
    }
}
