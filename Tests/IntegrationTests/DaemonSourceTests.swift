import AklocTestSupport
import Foundation
import Testing

/// The source side seen through aklocd's socket (issue 3): what a subscriber
/// of `rawLocation` gets, epoch by epoch, against what gpspipe gets from the
/// same gpsd in the same run; gpsd dying, coming back, appearing late, lying.
@Suite(.serialized, .enabled(if: GPSDTools.shouldRun, "skipped: \(GPSDTools.missingMessage)"))
struct DaemonSourceTests {
    /// An epoch as aklocd delivers it or gpspipe merges it (AklocTestSupport).
    typealias Epoch = FixEpoch

    /// Replays `log` with aklocd and gpspipe both on its gpsd; returns
    /// aklocd's epochs, gpspipe's merged ones and gpspipe's first TPVs.
    static func replay(_ logPath: String) throws -> (akloc: [Epoch], gpspipe: [Epoch], firstTPVs: [Epoch]) {
        let fake = try GPSFake.start(log: logPath)
        defer { fake.stop() }
        let pipe = try GPSPipe(port: fake.port)
        defer { pipe.stop() }
        let daemon = try DaemonProcess(gpsdPort: fake.port)
        defer { daemon.stop() }
        let (client, _) = try daemon.connect()
        _ = try client.request("observe", ["keyPath": "rawLocation"])
        var epochs: [Epoch] = []
        // Until gpsfake finishes the log and its gpsd goes away.
        _ = try client.waitFor(timeout: 120) { message in
            if message.event == "change", let new = message["new"] as? [String: Any],
                let time = new["timestamp"] as? String,
                let latitude = new["latitude"] as? Double, let longitude = new["longitude"] as? Double
            {
                epochs.append(
                    Epoch(
                        time: time, latitude: latitude, longitude: longitude,
                        mode: new["mode"] as? String == "3d" ? 3 : 2,
                        speed: new["speed"] as? Double, course: new["course"] as? Double))
            }
            return message.notification == "sourceDisconnected"
        }
        _ = pipe.waitForExit(timeout: 30)
        let tpvs = pipe.tpvs()
        return (epochs, Self.mergedEpochs(tpvs), Self.firstTPVEpochs(tpvs))
    }

    /// gpspipe's epochs, merged as a `gpspipe -w` reader does.
    static func mergedEpochs(_ tpvs: [[String: Any]]) -> [Epoch] { FixEpoch.merged(tpvs) }

    /// The same, the way akloc did before (the first TPV of each time): what
    /// the merged view must differ from on a receiver gpsd splits.
    static func firstTPVEpochs(_ tpvs: [[String: Any]]) -> [Epoch] {
        var previous: String?
        return tpvs.compactMap { tpv -> Epoch? in
            guard let mode = tpv["mode"] as? Int, mode >= 2, let time = tpv["time"] as? String,
                let latitude = tpv["lat"] as? Double, let longitude = tpv["lon"] as? Double, time != previous
            else { return nil }
            previous = time
            return Epoch(
                time: time, latitude: latitude, longitude: longitude, mode: mode, speed: tpv["speed"] as? Double,
                course: tpv["track"] as? Double)
        }
    }

    /// aklocd joins a moment after gpspipe, so it may miss the first epochs;
    /// from its first one on, every epoch must match gpspipe's, in order.
    static func expectSameEpochs(_ log: String, _ result: (akloc: [Epoch], gpspipe: [Epoch], firstTPVs: [Epoch])) {
        guard let first = result.akloc.first else {
            #expect(result.gpspipe.isEmpty, "\(log): aklocd delivered nothing, gpspipe \(result.gpspipe.count)")
            return
        }
        guard let start = result.gpspipe.firstIndex(where: { $0.matches(first) }) else {
            Issue.record("\(log): aklocd's first epoch \(first) is not in gpspipe's output")
            return
        }
        let expected = Array(result.gpspipe[start...])
        #expect(
            result.akloc.count == expected.count, "\(log): aklocd \(result.akloc.count) vs gpspipe \(expected.count)")
        for (ours, theirs) in zip(result.akloc, expected) where !ours.matches(theirs) {
            Issue.record("\(log): aklocd \(ours) vs gpspipe \(theirs)")
            break
        }
        #expect(start <= 3, "\(log): aklocd joined late and missed \(start) epochs")
    }

    @Test(arguments: ["garmin-10x", "haicom-305N", "humminbird-M37", "motorola-t805", "navisys-gr701w", "mt3339"])
    func rawLocationMatchesGpspipe(log: String) throws {
        guard LiveReplay.requireTools() else { return }
        let result = try Self.replay(LiveReplay.bundled(log))
        Self.expectSameEpochs(log, result)
        if log == "haicom-305N" {
            // Issue 19's evidence: gpsd splits every epoch, and the first TPV
            // has gpsd's speed estimate and no track. aklocd now has the
            // receiver's track in every epoch, where its first TPVs have none.
            #expect(result.akloc.count >= 60 && result.akloc.allSatisfy { $0.course != nil })
            #expect(result.firstTPVs.allSatisfy { $0.course == nil })
            let differ = zip(result.gpspipe, result.firstTPVs).filter { $0.speed != $1.speed }.count
            #expect(differ == result.gpspipe.count, "the comparison must tell the merged view from the first TPV")
        }
        print("aklocd rawLocation \(log): \(result.akloc.count) epochs, gpspipe \(result.gpspipe.count)")
    }

    @Test(.enabled(if: GPSFake.sharedLogDirectory != nil, "skipped: no shared/gpsd-logs beside the package"))
    func everySharedLogMatchesGpspipe() throws {
        guard LiveReplay.requireTools(), let directory = GPSFake.sharedLogDirectory else { return }
        var table: [String] = []
        for log in GPSFake.logs(in: directory) {
            let result = try Self.replay(log.path)
            Self.expectSameEpochs(log.lastPathComponent, result)
            table.append("\(log.lastPathComponent): aklocd \(result.akloc.count), gpspipe \(result.gpspipe.count)")
        }
        print("aklocd rawLocation on the shared captures:\n" + table.joined(separator: "\n"))
    }

    @Test func gpsdKilledAndRestartedClientsSeeItAndFixesFlowAgain() throws {
        guard LiveReplay.requireTools() else { return }
        let log = LiveReplay.bundled("haicom-305N")
        let first = try GPSFake.start(log: log, cycle: 0.05)
        let port = first.port
        defer { first.stop() }
        let daemon = try DaemonProcess(gpsdPort: port)
        defer { daemon.stop() }
        let (client, _) = try daemon.connect()
        _ = try client.request("observe", ["keyPath": "rawLocation"])
        _ = try client.request("observe", ["keyPath": "state"])
        _ = try client.waitFor(timeout: 30) { $0["keyPath"] as? String == "rawLocation" }

        first.killGPSD()
        var sequence: [String] = []
        _ = try client.waitFor(timeout: 15) { message in
            if let notification = message.notification { sequence.append(notification) }
            return message.notification == "sourceDisconnected"
        }
        #expect(try client.request("get", ["keyPath": "state"]).result as? String == "sourceUnavailable")
        first.stop()

        let second = try GPSFake.start(log: log, port: port, cycle: 0.05)
        defer { second.stop() }
        let back = Date()
        _ = try client.waitFor(timeout: 30) { message in
            if let notification = message.notification { sequence.append(notification) }
            return message.notification == "sourceConnected"
        }
        let reconnect = Date().timeIntervalSince(back)
        _ = try client.waitFor(timeout: 30) { $0["keyPath"] as? String == "rawLocation" }
        #expect(sequence == ["sourceDisconnected", "sourceConnected"])
        #expect(daemon.process.isRunning)
        print("aklocd reconnect after gpsd returned: \(String(format: "%.3f", reconnect)) s")
    }

    @Test func startedBeforeGpsdItConnectsWhenGpsdAppears() throws {
        guard LiveReplay.requireTools() else { return }
        let port = FreePort.loopbackTCP()
        let daemon = try DaemonProcess(gpsdPort: port)
        defer { daemon.stop() }
        let (client, _) = try daemon.connect()
        #expect(try client.request("get", ["keyPath": "state"]).result as? String == "sourceUnavailable")
        _ = try client.request("startUpdatingLocation")
        let fake = try GPSFake.start(log: LiveReplay.bundled("humminbird-M37"), port: port, cycle: 0.05)
        defer { fake.stop() }
        _ = try client.waitFor(timeout: 30) { $0.notification == "sourceConnected" }
        let first = try client.waitFor(timeout: 30) { $0.event == "didGetFirstLocation" }
        #expect(first.location?["latitude"] as? Double != nil)
    }

    /// A fake gpsd on loopback sends garbage and truncated JSON between good
    /// fixes: aklocd logs it, reconnects, and keeps serving the good ones.
    @Test func garbageFromGpsdIsLoggedAndServingGoesOn() throws {
        let good = { (second: Int) in FakeGPSD.tpv(second: second, lat: 52 + Double(second) / 1000, lon: 5.25) }
        let server = try FakeGPSD(scripts: [
            [.send(good(1)), .send(Array("this is not gpsd\r\n".utf8))],
            [
                .send(good(2)),
                .send(Array(#"{"class":"TPV","device":"/dev/fake0","mode":3,"lat":51.1"#.utf8) + [13, 10]),
            ],
            [.send(good(3)), .send(good(4))],
        ])
        defer { server.stop() }
        // Without the track recorder aklocd opens gpsd only for the observer
        // below, so the first script's fix is certain to reach it (the
        // recorder would watch from start-up, racing the client's connect).
        let daemon = try DaemonProcess(gpsdPort: server.port, config: "[track]\nenable = no\n")
        defer { daemon.stop() }
        let (client, _) = try daemon.connect()
        _ = try client.request("observe", ["keyPath": "rawLocation.latitude"])
        var latitudes: [Double] = []
        var notifications: [String] = []
        _ = try client.waitFor(timeout: 60) { message in
            if let notification = message.notification { notifications.append(notification) }
            if let latitude = message["new"] as? Double { latitudes.append(latitude) }
            return latitudes.last == 52.004
        }
        #expect(latitudes == [52.001, 52.002, 52.003, 52.004], "nothing from the bad lines, every good fix")
        #expect(notifications.filter { $0 == "sourceDisconnected" }.count == 2)
        let log = daemon.process.stderr()
        #expect(log.contains("gpsd"), "the bad input is logged: \(log)")
        #expect(daemon.process.isRunning)
    }
}
