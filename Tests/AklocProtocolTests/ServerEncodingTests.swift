import AklocCore
import AklocJSON
import AklocProtocol
import Testing

private func text(_ bytes: [UInt8]) -> String {
    #expect(bytes.last == 0x0A, "a line ends in a newline")
    #expect(!bytes.dropLast().contains(0x0A), "exactly one line")
    return String(decoding: bytes.dropLast(), as: UTF8.self)
}

private func message(_ bytes: [UInt8]) throws -> ServerEvent {
    try ServerEvent.decode(bytes.dropLast()).get()
}

let fullLocation = Location(
    latitude: 52.512_345_6, longitude: 5.301_234, mode: .threeD, altitude: -3.25, ellipsoidalAltitude: 40.1,
    horizontalAccuracy: 4.2, verticalAccuracy: 6.5, speed: 3.1, speedAccuracy: 0.2, course: 271.5,
    courseAccuracy: 12, climb: -0.1,
    timestamp: FixTime(secondsSince1970: 1_796_051_351, nanoseconds: 0),
    receivedAt: FixTime(secondsSince1970: 1_796_051_351, nanoseconds: 123_000_000),
    device: "/dev/ttyUSB0 \"quoted\"\\")
let minimalLocation = Location(latitude: -33.9, longitude: 151.2, mode: .twoD)

@Suite struct ServerEncodingTests {
    @Test func hello() throws {
        let line = ServerEncoder.hello(version: "0.1.0", authorizationStatus: .authorizedWhenInUse)
        #expect(
            text(line)
                == #"{"event":"hello","protocol":1,"version":"0.1.0","authorizationStatus":"authorizedWhenInUse"}"#)
        guard case .hello(let hello) = try message(line) else {
            Issue.record("not a hello")
            return
        }
        #expect(hello == ServerEvent.Hello(version: "0.1.0", authorizationStatus: .authorizedWhenInUse))
    }

    @Test func minimalLocationOmitsUnknownFields() {
        let line = ServerEncoder.event(.didGetFirstLocation(minimalLocation))
        #expect(
            text(line)
                == #"{"event":"didGetFirstLocation","location":{"latitude":-33.9,"longitude":151.2,"mode":"2d"}}"#)
    }

    @Test func fullLocationText() {
        let line = ServerEncoder.event(.didUpdateLocation(fullLocation, afterTimeInterval: 5.0234))
        #expect(
            text(line)
                == #"{"event":"didUpdateLocation","location":{"latitude":52.5123456,"longitude":5.301234,"altitude":-3.25,"#
                + #""ellipsoidalAltitude":40.1,"horizontalAccuracy":4.2,"verticalAccuracy":6.5,"speed":3.1,"#
                + #""speedAccuracy":0.2,"course":271.5,"courseAccuracy":12.0,"climb":-0.1,"mode":"3d","#
                + #""timestamp":"2026-11-30T15:09:11.000Z","receivedAt":"2026-11-30T15:09:11.123Z","#
                + #""device":"/dev/ttyUSB0 \"quoted\"\\"},"afterTimeInterval":5.023}"#)
    }

    @Test func nonFiniteNeverReachesTheWire() {
        var location = minimalLocation
        location.speed = .nan
        location.altitude = .infinity
        let line = text(ServerEncoder.event(.didUpdateLocation(location, afterTimeInterval: .nan)))
        #expect(!line.contains("nan") && !line.contains("inf") && !line.contains("speed"))
        #expect(!line.contains("afterTimeInterval"))
        let change = text(
            ServerEncoder.event(.change(keyPath: KeyPath(.myLocation, member: .speed), new: .number(.nan), old: nil)))
        #expect(change == #"{"event":"change","keyPath":"myLocation.speed","new":null}"#)
    }

    @Test func changeEvents() throws {
        let time = FixTime(secondsSince1970: 0, nanoseconds: 5_000_000)
        let cases: [(Engine.Event, String)] = [
            (
                .change(keyPath: KeyPath(.state), new: .string("running"), old: .string("searching")),
                #"{"event":"change","keyPath":"state","new":"running","old":"searching"}"#
            ),
            (
                .change(keyPath: KeyPath(.myLocation, member: .speed), new: .number(3.5), old: nil),
                #"{"event":"change","keyPath":"myLocation.speed","new":3.5}"#
            ),
            (
                .change(keyPath: KeyPath(.myLocation, member: .speed), new: .null, old: .number(1e-7)),
                #"{"event":"change","keyPath":"myLocation.speed","new":null,"old":1e-07}"#
            ),
            (
                .change(
                    keyPath: KeyPath(.myLocation, member: .coordinate), new: .coordinate(latitude: 1.5, longitude: -2),
                    old: .null),
                #"{"event":"change","keyPath":"myLocation.coordinate","new":{"latitude":1.5,"longitude":-2.0},"old":null}"#
            ),
            (
                .change(keyPath: KeyPath(.rawLocation, member: .timestamp), new: .time(time), old: nil),
                #"{"event":"change","keyPath":"rawLocation.timestamp","new":"1970-01-01T00:00:00.005Z"}"#
            ),
            (
                .change(keyPath: KeyPath(.myLocation), new: .location(minimalLocation), old: nil),
                #"{"event":"change","keyPath":"myLocation","new":{"latitude":-33.9,"longitude":151.2,"mode":"2d"}}"#
            ),
        ]
        for (event, expected) in cases {
            let line = ServerEncoder.event(event)
            #expect(text(line) == expected)
            guard case .change(let change) = try message(line), case .change(let keyPath, _, _) = event else {
                Issue.record("not a change")
                continue
            }
            #expect(change.keyPath == keyPath)
        }
    }

    @Test func replies() throws {
        let cases: [([UInt8], String)] = [
            (ServerEncoder.reply(id: 1, .success(.done)), #"{"id":1,"ok":true,"result":null}"#),
            (ServerEncoder.reply(id: "a", .success(.value(.number(2)))), #"{"id":"a","ok":true,"result":2.0}"#),
            (
                ServerEncoder.reply(id: nil, .success(.location(minimalLocation))),
                #"{"id":null,"ok":true,"result":{"latitude":-33.9,"longitude":151.2,"mode":"2d"}}"#
            ),
            (
                ServerEncoder.reply(id: .double(2.5), .success(.authorization(.authorizedAlways))),
                #"{"id":2.5,"ok":true,"result":{"authorizationStatus":"authorizedAlways"}}"#
            ),
            (
                ServerEncoder.reply(id: 3, .failure(EngineError(.timeout, "no fix within 10 s"))),
                #"{"id":3,"ok":false,"error":{"code":"timeout","message":"no fix within 10 s"}}"#
            ),
            (
                ServerEncoder.reply(error: ProtocolError(.unknownOp, "unknown op \"fly\"", id: 9)),
                #"{"id":9,"ok":false,"error":{"code":"unknownOp","message":"unknown op \"fly\""}}"#
            ),
            (
                ServerEncoder.reply(error: ProtocolError(.lineTooLong, "line longer than 65536 bytes")),
                #"{"id":null,"ok":false,"error":{"code":"lineTooLong","message":"line longer than 65536 bytes"}}"#
            ),
            (ServerEncoder.replyDone(id: 4), #"{"id":4,"ok":true,"result":null}"#),
        ]
        for (line, expected) in cases {
            #expect(text(line) == expected)
            guard case .reply(let id, let result) = try message(line) else {
                Issue.record("not a reply")
                continue
            }
            if case .failure(let error) = result {
                #expect(error.id == id)
                #expect(ErrorCode.allKnown.contains(error.code))
            }
        }
    }

    @Test func errorReplyForEveryDecodeFailureEchoesID() throws {
        guard case .failure(let error) = ClientRequest.decode(Array(#"{"id":"x","op":"get","keyPath":"nope"}"#.utf8))
        else {
            Issue.record("accepted")
            return
        }
        let line = ServerEncoder.reply(error: error)
        guard case .reply(let id, .failure(let decoded)) = try message(line) else {
            Issue.record("not an error reply")
            return
        }
        #expect(id == "x")
        #expect(decoded.code == .unknownKeyPath)
    }

    @Test func statusRoundTrips() throws {
        let status = DaemonStatus(
            version: "0.1.0", state: .running, paused: false, uptimeSeconds: 3605.5,
            source: .init(name: "gpsd://127.0.0.1:2947", connected: true),
            fix: .init(location: fullLocation, ageSeconds: 0.8),
            clients: .init(connected: 3, updating: 2, observing: 1),
            counters: .init(
                fixesReceived: 3600, deliveries: 1442, eventsCoalesced: 4, clientsDropped: 1, badRequests: 2))
        let line = ServerEncoder.reply(id: 1, status: status)
        guard case .reply(id: 1, result: .success(let result)) = try message(line) else {
            Issue.record("not a reply: \(text(line))")
            return
        }
        #expect(try DaemonStatus(json: result) == status)
        #expect(result["fix"]?["location"]?["latitude"] == .double(52.512_345_6))

        var idle = status
        idle.fix = nil
        idle.state = .sourceUnavailable
        let idleLine = ServerEncoder.reply(id: 2, status: idle)
        #expect(!text(idleLine).contains("\"fix\""))
        guard case .reply(_, .success(let idleResult)) = try message(idleLine) else { return }
        #expect(try DaemonStatus(json: idleResult) == idle)
    }

    @Test func statusDecodingIsLenientAboutCounters() throws {
        let json = try JSONValue.parse(
            Array(
                #"{"version":"9","state":"paused","paused":true,"uptimeSeconds":1,"source":{"name":"gpsd","connected":false},"clients":{"connected":0,"updating":0,"observing":0},"counters":{"fixesReceived":5,"future":1}}"#
                    .utf8)
        ).get()
        let status = try DaemonStatus(json: json)
        #expect(status.counters.fixesReceived == 5)
        #expect(status.counters.deliveries == 0)
        #expect(status.state == .paused)
    }

    @Test func stringsAreEscaped() throws {
        let nasty = "q\"b\\s/\n\r\t\u{08}\u{0C}\u{01}\u{1F}\u{7F}é😀\u{2028}"
        let line = ServerEncoder.event(.change(keyPath: KeyPath(.source), new: .string(nasty), old: nil))
        #expect(text(line).contains(#"q\"b\\s/\n\r\t\b\f\u0001\u001f"#))
        guard case .change(let change) = try message(line) else { return }
        #expect(change.new == .string(nasty))
    }

    @Test func numbersAreShortestRoundTrip() throws {
        for value in [
            0.1, 1.0 / 3, 52.123_456_789_012, -1e-300, 1e300, 123_456_789_012_345_680.0, .leastNonzeroMagnitude, 0,
            -0.0, 42,
        ] {
            var writer = JSONWriter()
            writer.number(value)
            let parsed = try JSONValue.parse(writer.bytes).get()
            #expect(parsed.doubleValue == value, "\(String(decoding: writer.bytes, as: UTF8.self))")
        }
        var writer = JSONWriter()
        writer.number(0.1)
        #expect(writer.bytes == Array("0.1".utf8))
    }
}

@Suite struct JSONValueTests {
    @Test func writeThenParseIsIdentity() throws {
        let values: [JSONValue] = [
            nil, true, false, 0, -1, .int(.max), .int(.min), 2.0, -0.5, 1e-7, "", "x\u{0}y",
            [1, "two", [3.0], ["four": nil]],
            ["a": ["b": ["c": [true]]], "": 1, "é": "😀"],
        ]
        for value in values {
            #expect(try JSONValue.parse(value.jsonBytes).get() == value, "\(value.jsonString)")
        }
    }

    @Test func doubleIDsStayDoubles() throws {
        let line = ServerEncoder.replyDone(id: .double(2))
        #expect(String(decoding: line, as: UTF8.self) == "{\"id\":2.0,\"ok\":true,\"result\":null}\n")
        guard case .reply(let id, _) = try ServerEvent.decode(line.dropLast()).get() else { return }
        #expect(id == .double(2))
    }

    @Test func duplicateKeysKeepTheLast() throws {
        #expect(try JSONValue.parse(Array(#"{"a":1,"a":2}"#.utf8)).get() == ["a": 2])
    }
}

@Suite struct TimeWritingTests {
    @Test func writerTimeMatchesFixTimeISO8601() {
        var samples: [FixTime] = [
            FixTime(secondsSince1970: 0), FixTime(secondsSince1970: -1, nanoseconds: 999_999_999),
            FixTime(secondsSince1970: 951_782_400), FixTime(secondsSince1970: 1_796_051_351, nanoseconds: 5_000_000),
            FixTime(secondsSince1970: -62_135_596_800), FixTime(secondsSince1970: 253_402_300_799, nanoseconds: 1),
            FixTime(secondsSince1970: 253_402_300_800), FixTime(secondsSince1970: -62_135_596_801),
        ]
        var seconds: Int64 = -2_208_988_800
        while seconds < 4_102_444_800 {
            samples.append(
                FixTime(secondsSince1970: seconds, nanoseconds: Int32(seconds & 0x3FFF_FFFF % 1_000_000_000)))
            seconds += 7_777_777
        }
        for time in samples {
            var writer = JSONWriter()
            writer.time(time)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == "\"\(time.iso8601)\"")
        }
    }
}

@Suite struct ErrorHelperTests {
    @Test func lineTooLongAndForbiddenReplies() {
        #expect(
            String(decoding: ServerEncoder.reply(error: .lineTooLong()), as: UTF8.self)
                == #"{"id":null,"ok":false,"error":{"code":"lineTooLong","message":"line longer than 65536 bytes"}}"#
                + "\n")
        let forbidden = ProtocolError.forbidden(.engine(.pause), adminGroup: "akloc-admin", id: 11)
        #expect(
            String(decoding: ServerEncoder.reply(error: forbidden), as: UTF8.self)
                == #"{"id":11,"ok":false,"error":{"code":"forbidden","message":"pause needs root or the akloc-admin group"}}"#
                + "\n")
    }

    @Test func adminOperations() throws {
        let admin = ["pause", "resume", "reload", "authorize", "clearTrack", "importTrack"]
        for name in ClientRequest.operationNames {
            var line = #"{"op":"\#(name)","keyPath":"state","type":"always","policy":{},"subject":"a","status":"deny"}"#
            if name == "startUpdatingLocation" { line = #"{"op":"startUpdatingLocation"}"# }
            // The geo ops refuse members they do not take.
            if ["reverseGeocode", "searchPlaces", "countries"].contains(name) {
                line = #"{"op":"\#(name)","query":"a"}"#
            }
            if name == "reverseGeocode" { line = #"{"op":"reverseGeocode"}"# }
            if name == "importTrack" { line = #"{"op":"importTrack","action":"abort"}"# }
            // The places ops refuse members they do not use.
            if PlacesRequest.operationNames.contains(name) { line = #"{"op":"\#(name)","name":"a"}"# }
            if name == "places" || name.hasSuffix("Monitoring") { line = #"{"op":"\#(name)"}"# }
            let request = try ClientRequest.decode(Array(line.utf8)).get()
            #expect(request.operation.isAdmin == admin.contains(name), "\(name)")
            #expect(request.operation.name == name)
        }
    }
}

@Suite struct CoalescingTests {
    @Test func onlyLocationEventsCoalesce() {
        let location = Location(latitude: 1, longitude: 2)
        #expect(Engine.Event.didUpdateLocation(location, afterTimeInterval: 5).coalescingKey == "didUpdateLocation")
        #expect(
            Engine.Event.didUpdateLocation(location, afterTimeInterval: nil).coalescingKey == "didUpdateLocation/epoch")
        #expect(
            Engine.Event.change(keyPath: KeyPath(.myLocation, member: .speed), new: .number(1), old: nil).coalescingKey
                == "change/myLocation.speed")
        #expect(Engine.Event.change(keyPath: KeyPath(.state), new: .string("paused"), old: nil).coalescingKey == nil)
        #expect(Engine.Event.didGetFirstLocation(location).coalescingKey == nil)
        #expect(Engine.Event.didGetError(.locationManagerCantDetectFirstLocation).coalescingKey == nil)
        #expect(Engine.Event.didGetNotification(.paused).coalescingKey == nil)
    }
}
