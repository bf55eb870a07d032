import AklocTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension RealUsers.AuthorizationTests {
    /// Run as the unauthorized user: opens `count` connections and keeps
    /// every one busy (one request in flight each, the next sent when the
    /// reply comes) until SIGTERM, then prints a JSON summary. "ready" is
    /// printed once every connection has its hello. Any line that carries a
    /// position is counted.
    static let floodScript = """
        import json, selectors, signal, socket, sys
        path, count = sys.argv[1], int(sys.argv[2])
        stop = False
        def on_term(signum, frame):
            global stop
            stop = True
        signal.signal(signal.SIGTERM, on_term)
        requests = [
            {"op": "get", "keyPath": "myLocation"},
            {"op": "startUpdatingLocation", "everyEpoch": True},
            {"op": "observe", "keyPath": "rawLocation"},
            {"op": "requestLocation", "timeout": 1},
            {"op": "status"},
            {"op": "get", "keyPath": "rawLocation.coordinate"},
            {"op": "observe", "keyPath": "myLocation", "options": ["initial"]},
            {"op": "pause"},
        ]
        stats = {"connections": 0, "hellos": {}, "sent": 0, "replies": 0, "errors": {},
                 "events": 0, "positions": 0, "closed": 0}
        class Peer:
            def __init__(self, sock):
                self.sock, self.buffer, self.sent = sock, b"", 0
        def send_next(peer):
            request = dict(requests[peer.sent % len(requests)])
            peer.sent += 1
            request["id"] = peer.sent
            peer.sock.sendall((json.dumps(request) + "\\n").encode())
            stats["sent"] += 1
        selector = selectors.DefaultSelector()
        for _ in range(count):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(path)
            stats["connections"] += 1
            selector.register(sock, selectors.EVENT_READ, Peer(sock))
        hellos, announced = 0, False
        while not stop:
            for key, _ in selector.select(timeout=0.2):
                peer = key.data
                data = peer.sock.recv(65536)
                if not data:
                    stats["closed"] += 1
                    selector.unregister(peer.sock)
                    continue
                peer.buffer += data
                while b"\\n" in peer.buffer:
                    line, peer.buffer = peer.buffer.split(b"\\n", 1)
                    if b'"latitude"' in line or b'"longitude"' in line:
                        stats["positions"] += 1
                    message = json.loads(line)
                    if message.get("event") == "hello":
                        status = message.get("authorizationStatus")
                        stats["hellos"][status] = stats["hellos"].get(status, 0) + 1
                        hellos += 1
                        send_next(peer)
                    elif "ok" in message:
                        stats["replies"] += 1
                        if not message["ok"]:
                            code = message["error"]["code"]
                            stats["errors"][code] = stats["errors"].get(code, 0) + 1
                        send_next(peer)
                    else:
                        stats["events"] += 1
            if hellos == count and not announced:
                print("ready", flush=True)
                announced = True
        print(json.dumps(stats), flush=True)
        """

    /// Raises this process's soft descriptor limit to its hard limit (the
    /// flood helper and gpsfake inherit it); returns the new soft limit.
    static func raiseDescriptorLimit() -> UInt64 {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return UInt64(limit.rlim_cur)
    }

    /// gpspipe's TPVs reduced by the rule akloc promises (DESIGN §2): mode ≥ 2
    /// with a position, the first TPV of each `time` per device.
    static func referenceEpochs(_ tpvs: [[String: Any]]) -> [String] {
        var lastTime: [String: String] = [:]
        var epochs: [String] = []
        for tpv in tpvs {
            guard let mode = tpv["mode"] as? Int, mode >= 2, tpv["lat"] is Double, tpv["lon"] is Double,
                let time = tpv["time"] as? String
            else { continue }
            let device = tpv["device"] as? String ?? ""
            if lastTime[device] == time { continue }
            lastTime[device] = time
            epochs.append(time)
        }
        return epochs
    }

    /// DESIGN §2 and issue 6: 1 000 connections of an unauthorized user, kept
    /// open and busy, while an authorized user observes `rawLocation`: the
    /// authorized client gets every epoch gpspipe saw from the same gpsd, and
    /// the unauthorized connections get no position. aklocd starts with a soft
    /// descriptor limit of 256 (systemd's default soft limit is 1024), so
    /// serving them needs it to raise its own limit.
    @Test func thousandUnauthorizedConnectionsDoNotStarveAnAuthorizedOne() throws {
        guard AuthorizationStage.requireTools() else { return }
        let connections = 1_000
        let limit = Self.raiseDescriptorLimit()
        try #require(limit >= UInt64(connections) + 200, "RLIMIT_NOFILE hard limit \(limit) is too low")
        let stage = AuthorizationStage()
        defer { stage.tearDown() }
        let (watcher, crowd) = (try stage.accounts.addUser(), try stage.accounts.addUser())
        let prlimit = TestProcess.which("prlimit") ?? "/usr/bin/prlimit"
        // One pass: it ends when gpsd goes, and every epoch is compared with gpspipe's.
        try stage.start(
            config: "[authorization]\ndefault = deny\n\(watcher.name) = always\n", log: "haicom-305N", loop: false,
            launcher: [prlimit, "--nofile=256:\(limit)", "--"], gpspipe: true)
        let pipe = stage.pipe!
        let (authorized, hello) = try stage.connect(as: watcher)
        #expect(hello["authorizationStatus"] as? String == "authorizedAlways")
        #expect(try authorized.request("observe", ["keyPath": "rawLocation"]).succeeded)

        let flood = try TestProcess(
            TestProcess.which("setpriv") ?? "/usr/bin/setpriv",
            [
                "--reuid=\(crowd.uid)", "--regid=\(crowd.gid)", "--clear-groups", "--", PeerConnector.python, "-I",
                "-c", Self.floodScript, stage.socketPath, String(connections),
            ])
        defer { flood.kill() }

        // Read the authorized client until gpsd has gone (aklocd says so once
        // it has handled every line before gpsd's EOF); note when the crowd is all in.
        var epochs: [String] = []
        var underLoad = 0
        var floodReady = false
        var sourceGone = false
        let deadline = Date().addingTimeInterval(120)
        while !sourceGone, Date() < deadline {
            if !floodReady {
                floodReady = flood.stdout().hasPrefix("ready")
                if !floodReady && !flood.isRunning { break }
            }
            guard let line = try? authorized.readLine(timeout: 0.2) else { continue }
            let message = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            if let location = message.position, let time = location["timestamp"] as? String {
                epochs.append(time)
                if floodReady { underLoad += 1 }
            }
            sourceGone = message.notification == "sourceDisconnected"
        }
        #expect(floodReady, "the crowd never got all its hellos: \(flood.stderr())")
        #expect(sourceGone, "aklocd never reported gpsd gone")
        #expect(stage.fake!.waitForExit(timeout: 10) == 0, "gpsfake: \(stage.fake!.process.stderr())")
        #expect(pipe.waitForExit(timeout: 15) != nil, "gpspipe did not exit with gpsd")

        flood.signal(SIGTERM)
        #expect(flood.waitForExit(timeout: 30) == 0, "flood helper: \(flood.stderr())")
        let summaryLine = flood.stdout().split(separator: "\n").last.map(String.init) ?? ""
        let summary = (try? JSONSerialization.jsonObject(with: Data(summaryLine.utf8))) as? [String: Any] ?? [:]
        let reference = Self.referenceEpochs(pipe.tpvs())
        print(
            "1000 unauthorized connections: authorized client \(epochs.count) epochs (\(underLoad) with all "
                + "\(connections) connected), gpspipe \(reference.count); crowd: \(summaryLine)")
        // gpsfake feeds 1.4 s after it listens, whoever is there: on a loaded
        // machine the client may subscribe after the first epochs. From its
        // first epoch on (before the crowd connected) it must miss none.
        let first = epochs.first.flatMap { reference.firstIndex(of: $0) }
        #expect(first != nil, "the authorized client got \(epochs.count) epochs, none of gpspipe's")
        if let first {
            if first > 0 { print("the authorized client subscribed after \(first) of gpspipe's epochs") }
            #expect(
                epochs == Array(reference[first...]), "authorized \(epochs.count) epochs vs gpspipe \(reference.count)")
        }
        #expect(underLoad * 2 > reference.count, "only \(underLoad) epochs arrived with all the connections open")
        #expect(summary["connections"] as? Int == connections)
        #expect(summary["hellos"] as? [String: Int] == ["notDetermined": connections])
        #expect(summary["positions"] as? Int == 0, "the crowd received positions")
        #expect(summary["closed"] as? Int == 0, "aklocd closed crowd connections")
        #expect((summary["replies"] as? Int ?? 0) >= connections)
        #expect(stage.daemon!.process.isRunning)
    }

    /// aklocd out of descriptors (a hard limit too low to raise) stops
    /// accepting rather than spinning on EMFILE: its clients are still
    /// answered, the failure is logged once per pause rather than per
    /// wake-up, and peers waiting in the backlog get in as others leave.
    @Test func outOfDescriptorsAklocdWaitsForAClientToLeave() throws {
        guard AuthorizationStage.requireTools() else { return }
        let stage = AuthorizationStage()
        defer { stage.tearDown() }
        let crowd = try stage.accounts.addUser()
        let prlimit = TestProcess.which("prlimit") ?? "/usr/bin/prlimit"
        try stage.start(config: "", log: nil, launcher: [prlimit, "--nofile=96:96", "--"])
        let (root, _) = try stage.connectAsRoot()

        // The listen backlog takes them all; aklocd accepts what its limit allows.
        var peers = try PeerConnector.connect(stage.socketPath, uid: crowd.uid, gid: crowd.gid, count: 100)
        var greeted: [SocketClient] = []
        var waiting: [SocketClient] = []
        for peer in peers {
            // Accepted in connect order: after the first without a hello, none has one.
            if waiting.isEmpty, (try? peer.readLine(timeout: 2)) != nil {
                greeted.append(peer)
            } else {
                waiting.append(peer)
            }
        }
        peers.removeAll()  // only `greeted` and `waiting` hold them now
        try #require(
            !greeted.isEmpty && !waiting.isEmpty && greeted.count > waiting.count + 2,
            "\(greeted.count) greeted, \(waiting.count) waiting")
        for _ in 0..<20 { #expect(try root.request("status", timeout: 5).succeeded, "aklocd busy at its limit") }

        greeted.removeFirst(waiting.count + 2)  // closed: aklocd sees them leave
        for (index, peer) in waiting.enumerated() {
            do {
                #expect(try peer.readMessage(timeout: 10).event == "hello")
            } catch {
                let log = stage.daemon!.process.stderr().split(separator: "\n").suffix(30).joined(separator: "\n")
                Issue.record("waiting peer \(index) of \(waiting.count): \(error)\n\(log)")
                break
            }
        }
        #expect(try root.request("status").succeeded)
        let failures = stage.daemon!.process.stderr().components(separatedBy: "accept failed").count - 1
        print(
            "out of descriptors: \(greeted.count + waiting.count + 2) peers, \(waiting.count) waited; "
                + "\(failures) accept failures logged")
        #expect(failures >= 1 && failures < 40, "\(failures) accept failures logged: spinning?")
    }
}
