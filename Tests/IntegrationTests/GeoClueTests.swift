import AklocTestSupport
import Foundation
import Testing

/// Polls `condition` every 50 ms until it holds or `timeout` passes.
private func eventually(timeout: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        usleep(50_000)
    }
    return try condition()
}

/// Metres between two points (haversine on a 6371 km sphere).
private func metres(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
    let radians = Double.pi / 180
    let dLat = (b.0 - a.0) * radians
    let dLon = (b.1 - a.1) * radians
    let h = sin(dLat / 2) * sin(dLat / 2) + cos(a.0 * radians) * cos(b.0 * radians) * sin(dLon / 2) * sin(dLon / 2)
    return 2 * 6_371_000 * asin(min(1, sqrt(h)))
}

/// DESIGN §12 against GeoClue's own client (where-am-i), gdbus, busctl, a
/// dbus-python client and gpsd itself as the NMEA parser, on a private
/// system bus.
@Suite(.serialized, .enabled(if: GeoClueStage.shouldRun, .init(rawValue: GeoClueStage.skipMessage)))
struct GeoClueTests {
    @Test func whereAmIPrintsTheReplayedFixAndTheObjectsMatchGeoCluesXML() throws {
        guard GeoClueStage.requireTools() else { return }
        let stage = try GeoClueStage()
        defer { stage.tearDown() }
        #expect(stage.servesTheName())
        #expect(
            try stage.property("/org/freedesktop/GeoClue2/Manager", "Manager", "AvailableAccuracyLevel")
                == "(<uint32 8>,)")
        #expect(try stage.property("/org/freedesktop/GeoClue2/Manager", "Manager", "InUse") == "(<false>,)")

        let whereAmI = try stage.startWhereAmI(seconds: 20)
        defer { whereAmI.kill() }
        let printed = eventually(timeout: 15) { WhereAmILocation.parse(whereAmI.stdout()).count >= 3 }
        #expect(printed, "where-am-i printed: \(whereAmI.stdout()) \(whereAmI.stderr())")
        let clients = try stage.clientPaths()
        #expect(clients.count == 1, "\(clients)")
        #expect(try stage.property("/org/freedesktop/GeoClue2/Manager", "Manager", "InUse") == "(<true>,)")

        // Introspection of each kind of object, as the bus serves it, against Debian's XML.
        if let client = clients.first {
            let location = try stage.property(client, "Client", "Location")
            let locationPath = try #require(location.split(separator: "'").dropFirst().first.map(String.init))
            for (path, name) in [
                ("/org/freedesktop/GeoClue2/Manager", "Manager"), (client, "Client"), (locationPath, "Location"),
            ] {
                let introspect = try TestProcess(
                    "gdbus",
                    ["introspect", "--system", "--xml", "--dest", "org.freedesktop.GeoClue2", "--object-path", path],
                    environment: stage.bus.environment)
                #expect(introspect.waitForExit(timeout: 10) == 0, "\(introspect.stderr())")
                let reference = try String(
                    contentsOfFile: "/usr/share/dbus-1/interfaces/org.freedesktop.GeoClue2.\(name).xml", encoding: .utf8
                )
                let expected = IntrospectionXML.describe(reference, interfacesWithPrefix: "org.freedesktop.GeoClue2")
                #expect(expected.count > 3)
                #expect(
                    IntrospectionXML.describe(introspect.stdout(), interfacesWithPrefix: "org.freedesktop.GeoClue2")
                        == expected, "\(path)")
            }
            #expect(try stage.property(client, "Client", "Active") == "(<true>,)")
            #expect(try stage.property(client, "Client", "DesktopId") == "(<'geoclue-where-am-i'>,)")
        }

        // The replayed fixes, as gpsd gave them to gpspipe (where-am-i prints six decimals).
        let locations = WhereAmILocation.parse(whereAmI.stdout())
        let reference = stage.referencePositions()
        for location in locations {
            #expect(
                GeoClueStage.isReplayed(location.latitude, location.longitude, in: reference),
                "\(location) is not one of gpsd's fixes")
            #expect(
                location.accuracy == -1 || (location.accuracy > 0 && location.accuracy < 1000), "unknown or a fix's eph"
            )
        }

        // where-am-i vanishes (SIGKILL, no DeleteClient): its client goes with it.
        whereAmI.kill()
        #expect(try eventually(timeout: 10) { try stage.clientPaths().isEmpty }, "the client outlived its peer")
        #expect(try stage.property("/org/freedesktop/GeoClue2/Manager", "Manager", "InUse") == "(<false>,)")
        #expect(stage.daemon.process.isRunning)
    }

    /// Each accuracy level through dbus-python clients and where-am-i, the
    /// thresholds honoured, and properties read with gdbus.
    @Test func accuracyLevelsAndThresholds() throws {
        guard GeoClueStage.requireTools() else { return }
        let stage = try GeoClueStage()
        defer { stage.tearDown() }
        let levels: [(level: UInt32, cell: Double?, accuracy: Double?)] = [
            (1, 1, 300_000), (4, 0.1, 15_000), (5, 0.02, 3_000), (6, 0.005, 1_000), (8, nil, nil),
        ]
        let byLevel = try levels.map { try stage.startPythonClient(level: $0.level, seconds: 6) }
        let timed = try stage.startPythonClient(timeThreshold: 2, seconds: 7)
        let distanced = try stage.startPythonClient(distanceThreshold: 8, seconds: 7)
        let street = try stage.startWhereAmI(["-a", "6"], seconds: 6)
        let everyone = byLevel + [timed, distanced, street]
        defer { for process in everyone { process.kill() } }

        // gdbus sees the properties the clients set, and may not change them (not its client).
        #expect(try eventually(timeout: 10) { try stage.clientPaths().count == 8 })
        let paths = try stage.clientPaths()
        let distances = try paths.map { try stage.property($0, "Client", "DistanceThreshold") }
        #expect(distances.filter { $0 == "(<uint32 8>,)" }.count == 1, "\(distances)")
        let times = try paths.map { try stage.property($0, "Client", "TimeThreshold") }
        #expect(times.filter { $0 == "(<uint32 2>,)" }.count == 1, "\(times)")
        let requested = try paths.map { try stage.property($0, "Client", "RequestedAccuracyLevel") }
        for level in [1, 4, 5, 8] { #expect(requested.contains("(<uint32 \(level)>,)"), "\(requested)") }
        #expect(requested.filter { $0 == "(<uint32 6>,)" }.count == 2)
        if let path = paths.first {
            let set = try TestProcess(
                "gdbus",
                [
                    "call", "--system", "--dest", "org.freedesktop.GeoClue2", "--object-path", path, "--method",
                    "org.freedesktop.DBus.Properties.Set", "org.freedesktop.GeoClue2.Client", "DistanceThreshold",
                    "<uint32 1>",
                ], environment: stage.bus.environment)
            #expect(set.waitForExit(timeout: 10) != 0)
            #expect(set.stderr().contains("AccessDenied"), "\(set.stderr())")
        }

        for process in everyone { #expect(process.waitForExit(timeout: 20) != nil) }
        let reference = stage.referencePositions()
        try #require(reference.count > 10)
        for (process, level) in zip(byLevel, levels) {
            let updates = GeoClueStage.lines(process)
            #expect(updates.count >= 3, "level \(level.level): \(process.stdout()) \(process.stderr())")
            for update in updates {
                let latitude = try #require(update["lat"] as? Double)
                let longitude = try #require(update["lon"] as? Double)
                guard let cell = level.cell, let accuracy = level.accuracy else {
                    #expect(GeoClueStage.isReplayed(latitude, longitude, in: reference), "exact: \(update)")
                    continue
                }
                // A cell centre, in the cell of a replayed fix, with the level's accuracy and nothing more.
                for value in [latitude, longitude] {
                    let cells = value / cell - 0.5
                    #expect(abs(cells - cells.rounded()) < 1e-6, "level \(level.level): \(value) is not a cell centre")
                }
                #expect(
                    reference.contains {
                        abs($0.0 - latitude) <= cell / 2 + 1e-9 && abs($0.1 - longitude) <= cell / 2 + 1e-9
                    },
                    "level \(level.level): \(update) is not in a replayed fix's cell")
                #expect(update["accuracy"] as? Double == accuracy)
                #expect(update["altitude"] as? Double == -Double.greatestFiniteMagnitude)
                #expect(update["speed"] as? Double == -1 && update["heading"] as? Double == -1)
            }
        }

        // GeoClue's own client at street level prints the street cell's centre.
        let streetLocations = WhereAmILocation.parse(street.stdout())
        #expect(!streetLocations.isEmpty, "\(street.stdout()) \(street.stderr())")
        for location in streetLocations {
            #expect(abs(location.latitude / 0.005 - 0.5 - (location.latitude / 0.005 - 0.5).rounded()) < 1e-3)
            #expect(location.accuracy == 1000)
        }

        // TimeThreshold 2: deliveries (their receipt times) at least 2 s apart.
        let timedUpdates = GeoClueStage.lines(timed)
        #expect(timedUpdates.count >= 2 && timedUpdates.count <= 4, "\(timedUpdates)")
        let stamps = timedUpdates.compactMap { $0["time"] as? Double }
        for (earlier, later) in zip(stamps, stamps.dropFirst()) { #expect(later - earlier >= 1.95) }

        // DistanceThreshold 8: consecutive deliveries at least 8 m apart.
        let moved = GeoClueStage.lines(distanced)
        #expect(moved.count >= 2, "\(distanced.stdout()) \(distanced.stderr())")
        let numbered = moved.compactMap { update -> (Int, (Double, Double))? in
            guard let path = update["location"] as? String, let number = Int(path.split(separator: "/").last ?? ""),
                let lat = update["lat"] as? Double, let lon = update["lon"] as? Double
            else { return nil }
            return (number, (lat, lon))
        }
        for (earlier, later) in zip(numbered, numbered.dropFirst()) where later.0 == earlier.0 + 1 {
            #expect(metres(earlier.1, later.1) >= 8, "\(earlier) -> \(later)")
        }
        let unthrottled = GeoClueStage.lines(byLevel[4]).count
        #expect(moved.count < unthrottled, "8 m apart must be fewer than every epoch (\(unthrottled))")
    }

    /// A uid akloc's rules deny gets AccessDenied on Start, in GeoClue's own
    /// client too; an allowed one is served meanwhile.
    @Test func deniedUserGetsAccessDenied() throws {
        guard GeoClueStage.requireTools() else { return }
        guard SystemAccounts.available else {
            if GeoClueStage.required { Issue.record("AKLOC_REQUIRE_TOOLS=1 and \(SystemAccounts.unavailableMessage)") }
            return
        }
        let accounts = SystemAccounts()
        defer { accounts.removeAll() }
        let denied = try accounts.addUser()
        let allowed = try accounts.addUser()
        let stage = try GeoClueStage(config: "[authorization]\n\(denied.name) = deny\n\(allowed.name) = always\n")
        defer { stage.tearDown() }

        let refused = try stage.startPythonClient(seconds: 2, as: denied)
        let served = try stage.startPythonClient(seconds: 4, as: allowed)
        let whereAmI = try stage.startWhereAmI(seconds: 3, as: denied)
        defer { for process in [refused, served, whereAmI] { process.kill() } }
        for process in [refused, served, whereAmI] { #expect(process.waitForExit(timeout: 20) != nil) }

        let refusals = GeoClueStage.lines(refused)
        #expect(
            refusals.count == 1 && refusals.first?["error"] as? String == "org.freedesktop.DBus.Error.AccessDenied",
            "\(refused.stdout()) \(refused.stderr())")
        #expect(!refusals.contains { $0["lat"] != nil })
        let whereAmIOutput = whereAmI.stdout() + whereAmI.stderr()
        #expect(whereAmIOutput.contains("AccessDenied"), "\(whereAmIOutput)")
        #expect(WhereAmILocation.parse(whereAmI.stdout()).isEmpty)

        let updates = GeoClueStage.lines(served)
        #expect(updates.count >= 2, "\(served.stdout()) \(served.stderr())")
        let reference = stage.referencePositions()
        for update in updates {
            #expect(
                GeoClueStage.isReplayed(update["lat"] as? Double ?? 0, update["lon"] as? Double ?? 0, in: reference))
        }
    }

    /// 100 where-am-i processes at once, each its own peer and client.
    @Test func aHundredClientsAtOnceGetTheirUpdates() throws {
        guard GeoClueStage.requireTools() else { return }
        let stage = try GeoClueStage()
        defer { stage.tearDown() }
        let clients = try (0..<100).map { _ in try stage.startWhereAmI(seconds: 60) }
        defer { for client in clients { client.kill() } }
        let everyoneServed = eventually(timeout: 40) {
            clients.allSatisfy { WhereAmILocation.parse($0.stdout()).count >= 2 }
        }
        let counts = clients.map { WhereAmILocation.parse($0.stdout()).count }
        #expect(everyoneServed, "locations per client: \(counts)")
        #expect(try stage.clientPaths().count == 100)
        for client in clients { client.kill() }
        let reference = stage.referencePositions()
        let printed = clients.flatMap { WhereAmILocation.parse($0.stdout()) }
        let strays = printed.filter { !GeoClueStage.isReplayed($0.latitude, $0.longitude, in: reference) }
        #expect(strays.isEmpty, "\(strays.count) of \(printed.count) printed locations are not gpsd's fixes")
        #expect(try eventually(timeout: 15) { try stage.clientPaths().isEmpty })
        #expect(stage.daemon.process.isRunning)
    }

    /// The NMEA feed through gpsd itself (reading a FIFO the test fills from
    /// the socket): the positions gpsd decodes are the replay's, and every
    /// sentence has a valid checksum, one GGA and one RMC per epoch.
    @Test func theNMEAFeedParsedByGPSDGivesTheReplayedPositions() throws {
        guard GeoClueStage.requireTools() else { return }
        let stage = try GeoClueStage(enable: false)
        defer { stage.tearDown() }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-nmea-gpsd-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("nmea").path
        try #require(mkfifo(fifo, 0o600) == 0)
        let port = FreePort.loopbackTCP()
        // The segment key gpsfake would give it, so the cleanup below finds
        // it (gpsd's default key is shared by every gpsd on the machine).
        let gpsd = try TestProcess(
            TestProcess.which("gpsd") ?? "/usr/sbin/gpsd", ["-N", "-n", "-b", "-S", String(port), fifo],
            environment: ["GPSD_SHM_KEY": "0x" + String(SharedMemory.gpsdKey(port: port), radix: 16)])
        defer {
            gpsd.kill()
            SharedMemory.removeGPSDSegments(port: port)
        }
        let feed = try SocketClient.connect(path: stage.nmeaPath)
        // gpsd refuses a device another process has open: the test opens
        // the FIFO only once gpsd holds it (-n: gpsd opens it at start).
        let holdsFIFO = eventually(timeout: 10) {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(gpsd.pid)/fd")) ?? []
            return fds.contains {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(gpsd.pid)/fd/\($0)")) == fifo
            }
        }
        try #require(holdsFIFO, "gpsd never opened \(fifo): \(gpsd.stderr())")
        #expect(eventually(timeout: 10) { FreePort.isListening(port) }, "gpsd: \(gpsd.stderr())")
        // Read-write, so the test holds a reader too: gpsd opening and
        // closing the device while it probes can never make a write EPIPE
        // (or SIGPIPE), and a write never blocks on a full FIFO.
        let writer = open(fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        try #require(writer >= 0)
        defer { close(writer) }
        let decoded = try GPSPipe(port: port)
        defer { decoded.stop() }

        var sentences: [String] = []
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            guard let line = try feed.readLine(timeout: 10) else { break }
            sentences.append(line)
            let bytes = Array((line + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
            if sentences.count % 20 == 0, decoded.tpvs().filter({ $0["lat"] != nil }).count >= 10 { break }
        }
        let positions = decoded.tpvs().compactMap { tpv -> (Double, Double)? in
            guard let lat = tpv["lat"] as? Double, let lon = tpv["lon"] as? Double else { return nil }
            return (lat, lon)
        }
        #expect(
            positions.count >= 10,
            "gpsd decoded \(positions.count) positions from \(sentences.count) sentences: \(gpsd.stderr())")
        let reference = stage.referencePositions()
        for (lat, lon) in positions {
            #expect(GeoClueStage.isReplayed(lat, lon, in: reference), "gpsd decoded \(lat), \(lon), not a replayed fix")
        }
        for sentence in sentences {
            #expect(sentence.hasSuffix("\r"), "CR LF line ends")
            let body = sentence.dropFirst().prefix { $0 != "*" }
            let checksum = body.utf8.reduce(UInt8(0), ^)
            #expect(sentence.first == "$" && sentence.contains(String(format: "*%02X", checksum)), "\(sentence)")
        }
        let kinds = sentences.map { $0.prefix(6) }
        let epochs = stride(from: 0, to: kinds.count - 1, by: 2).map { kinds[$0] + kinds[$0 + 1] }
        #expect(epochs.allSatisfy { $0 == "$GPGGA$GPRMC" }, "\(kinds)")
    }

    /// GeoClue itself (or anyone) owns the name: aklocd says so and serves its socket anyway.
    @Test func aTakenNameIsLoggedAndTheRestIsServed() throws {
        guard GeoClueStage.requireTools() else { return }
        let stage = try GeoClueStage()
        defer { stage.tearDown() }
        #expect(stage.servesTheName())
        let second = try DaemonProcess(
            gpsdPort: stage.fake.port, config: "[geoclue]\nenable = yes\n", environment: stage.bus.environment)
        defer { second.stop() }
        #expect(eventually(timeout: 10) { second.process.stderr().contains("is already owned on the system bus") })
        let (client, hello) = try second.connect()
        #expect(hello["event"] != nil || hello["authorizationStatus"] != nil, "\(hello)")
        #expect(try client.request("status").succeeded)
    }
}
