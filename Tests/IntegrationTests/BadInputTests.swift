import AklocTestSupport
import Foundation
import Testing

/// DESIGN §3: bad input never takes the daemon down. Every kind of bad line
/// gets an error reply and the connection stays (a line over 64 KiB closes
/// it), and a client beside it sees nothing of it.
@Suite(.serialized, .enabled(if: GPSDTools.shouldRun, "skipped: \(GPSDTools.missingMessage)"))
struct BadInputTests {
    @Test func everyKindOfBadInputIsAnsweredAndNothingElseIsDisturbed() throws {
        guard LiveReplay.requireTools() else { return }
        let replay = try LiveReplay(log: "humminbird-M37", cycle: 0.1)
        // The bystander must hear nothing but its own changes: not even a late sourceConnected.
        try replay.daemon.waitUntilSourceConnected()
        let (bystander, _) = try replay.daemon.connect()
        var bystanderSaw: [[String: Any]] = []
        _ = try bystander.request("observe", ["keyPath": "rawLocation.coordinate"])

        let (client, _) = try replay.daemon.connect()
        let cases: [(bytes: [UInt8], code: String)] = [
            (Array("garbage".utf8), "badJSON"),
            (Array("{\"id\":1,\"op\":".utf8), "badJSON"),
            ([0x7B, 0xFF, 0xFE, 0x7D], "badJSON"),
            (Array("{\"id\":2,\"op\":\"get\",\"keyPath\":\"st\u{1}ate\"}".utf8), "badJSON"),
            (Array("[]".utf8), "badRequest"),
            (Array("42".utf8), "badRequest"),
            (Array("{\"id\":3}".utf8), "badRequest"),
            (Array("{\"id\":4,\"op\":5}".utf8), "badRequest"),
            (Array("{\"id\":5,\"op\":\"get\",\"keyPath\":7}".utf8), "badRequest"),
            (Array("{\"id\":6,\"op\":\"get\"}".utf8), "badRequest"),
            (Array("{\"id\":{\"x\":1},\"op\":\"status\"}".utf8), "badRequest"),
            (Array("{\"id\":7,\"op\":\"observe\",\"keyPath\":\"state\",\"options\":\"initial\"}".utf8), "badRequest"),
            (
                Array("{\"id\":8,\"op\":\"startUpdatingLocation\",\"policy\":{\"minInterval\":\"fast\"}}".utf8),
                "badRequest"
            ),
            (
                Array(
                    "{\"id\":9,\"op\":\"startUpdatingLocation\",\"policy\":{\"minInterval\":9,\"maxInterval\":3}}".utf8),
                "badRequest"
            ),
            (Array("{\"id\":10,\"op\":\"requestLocation\",\"timeout\":\"soon\"}".utf8), "badRequest"),
            (Array("{\"id\":11,\"op\":\"requestAuthorization\",\"type\":\"sometimes\"}".utf8), "badRequest"),
            (Array("{\"id\":12,\"op\":\"fly\"}".utf8), "unknownOp"),
            (Array("{\"id\":13,\"op\":\"get\",\"keyPath\":\"myLocation.altitude.feet\"}".utf8), "unknownKeyPath"),
            (Array("{\"id\":14,\"op\":\"observe\",\"keyPath\":\"everything\"}".utf8), "unknownKeyPath"),
            (Array(repeating: UInt8(ascii: "["), count: 10_000), "badJSON"),
            (
                Array("{\"id\":15,\"op\":\"get\",\"keyPath\":\"state\"".utf8)
                    + Array(repeating: UInt8(ascii: " "), count: 60_000) + Array("}".utf8), "ok"
            ),
        ]
        for (index, bad) in cases.enumerated() {
            try client.sendRaw(bad.bytes + [10])
            let reply = try client.readMessage()
            let code = reply.ok == true ? "ok" : reply.errorCode
            #expect(
                code == bad.code, "case \(index) \(String(decoding: bad.bytes.prefix(60), as: UTF8.self)): \(reply)")
            #expect(reply.ok != nil, "case \(index) is answered with a reply: \(reply)")
        }
        // A request without an id is still answered, with a null id.
        try client.send(line: "{\"op\":\"get\",\"keyPath\":\"state\"}")
        let anonymous = try client.readMessage()
        #expect(anonymous.ok == true && anonymous["id"] is NSNull)
        // The same connection still works.
        #expect(try client.request("get", ["keyPath": "authorizationStatus"]).result as? String == "authorizedAlways")

        // A 1 MiB line: lineTooLong, then the daemon closes the connection.
        let (flooder, _) = try replay.daemon.connect()
        try? flooder.sendRaw(Array(repeating: UInt8(ascii: "x"), count: 1 << 20) + [10])
        let refusal = try flooder.readMessage()
        #expect(refusal.errorCode == "lineTooLong")
        #expect(try flooder.readLine(timeout: 10) == nil, "the connection is closed after lineTooLong")

        // Half a line, then gone; and thousands of connects and disconnects in a row.
        let (half, _) = try replay.daemon.connect()
        try half.sendRaw(Array("{\"id\":1,\"op\":\"sta".utf8))
        half.shutdownWrite()
        #expect(try half.readLine(timeout: 10) == nil)
        for index in 0..<3000 {
            let churn = try SocketClient(path: replay.daemon.socketPath)
            if index % 3 == 0 { try? churn.sendRaw(Array("{\"id\":1,".utf8)) }
            if index % 5 == 0 { _ = try churn.readLine() }
        }

        // Everyone else was untouched: the bystander saw only its own traffic.
        // The daemon may still be accepting and closing the last churned
        // connections, so wait (bounded) for its counts to settle.
        var result: [String: Any] = [:]
        let deadline = Date().addingTimeInterval(30)
        repeat {
            let status = try bystander.request("status", skipped: { bystanderSaw.append($0) })
            result = status.result as? [String: Any] ?? [:]
            let counters = result["counters"] as? [String: Any]
            let settled =
                (counters?["connectionsAccepted"] as? Int ?? 0) >= 3004
                && (result["clients"] as? [String: Any])?["connected"] as? Int == 2
            if settled { break }
        } while Date() < deadline
        let counters = try #require(result["counters"] as? [String: Any])
        #expect((counters["badRequests"] as? Int ?? 0) >= cases.count - 1)
        #expect((counters["connectionsAccepted"] as? Int ?? 0) >= 3004)
        #expect((result["clients"] as? [String: Any])?["connected"] as? Int == 2)
        _ = try bystander.waitFor(timeout: 30, skipped: { bystanderSaw.append($0) }) {
            $0.event == "change" && $0["keyPath"] as? String == "rawLocation.coordinate"
        }
        #expect(!bystanderSaw.contains { $0.ok == false }, "the bystander saw someone else's errors: \(bystanderSaw)")
        #expect(!bystanderSaw.contains { $0["keyPath"] as? String != "rawLocation.coordinate" && $0.event != nil })
        #expect(replay.daemon.process.isRunning)
        let (fresh, hello) = try replay.daemon.connect()
        #expect(hello.event == "hello")
        #expect(try fresh.request("get", ["keyPath": "state"]).ok == true)
    }
}
