import Foundation

/// GeoClue2's D-Bus API driven from Python (Debian python3-dbus), for the
/// GeoClue front's tests in process and against aklocd.
public enum GeoCluePythonClient {
    public static let python = PeerConnector.python

    /// What the client needs and this machine lacks.
    public static var missing: [String] {
        guard access(python, X_OK) == 0 else { return ["python3"] }
        let probe = try? TestProcess(python, ["-c", "import dbus"])
        return probe?.waitForExit(timeout: 30) == 0 ? [] : ["python3-dbus"]
    }

    /// A D-Bus client in Python (dbus-python, no GeoClue library): makes
    /// `count` clients with CreateClient, sets their properties, starts them,
    /// then for `seconds` prints each new Location as one JSON line per
    /// client and update; a failed Start prints {"error": NAME}.
    public static let script = """
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

    /// The command line that runs `script` with these settings.
    public static func command(
        count: Int = 1, level: UInt32 = 8, timeThreshold: UInt32 = 0, distanceThreshold: UInt32 = 0, seconds: Int
    ) -> [String] {
        [python, "-I", "-c", script]
            + [count, Int(level), Int(timeThreshold), Int(distanceThreshold), seconds].map(String.init)
    }

    /// The JSON lines a client printed.
    public static func lines(_ process: TestProcess) -> [[String: Any]] {
        process.stdout().split(whereSeparator: \.isNewline).compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }
}
