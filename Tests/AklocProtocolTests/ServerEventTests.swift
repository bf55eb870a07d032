import AklocCore
import AklocGeo
import AklocJSON
import AklocProtocol
import Testing

/// `ServerEvent` against `ServerEncoder`: every message the daemon writes,
/// encoded, decoded, and compared with what was encoded; then what a broken
/// or hostile daemon could send instead.
@Suite struct ServerEventTests {
    static func decode(_ line: [UInt8]) throws -> ServerEvent {
        #expect(line.last == 0x0A, "a line ends in a newline")
        return try ServerEvent.decode(line.dropLast()).get()
    }

    static func failure(_ text: String) -> ProtocolError? {
        guard case .failure(let error) = ServerEvent.decode(Array(text.utf8)) else { return nil }
        return error
    }

    static let home = try! SavedPlace(
        name: "Haven \"Oost\"", coordinate: Coordinate(latitude: 52.7033, longitude: 5.2917), radius: 250,
        owner: 1000, createdAt: FixTime(secondsSince1970: 1_796_051_352), note: "berth 12", shared: true)

    // MARK: - Round trips

    @Test func helloRoundTripsForEveryStatus() throws {
        for status in AuthorizationStatus.allCases {
            let line = ServerEncoder.hello(version: "0.1.0 \"beta\"", authorizationStatus: status)
            #expect(try Self.decode(line) == .hello(.init(version: "0.1.0 \"beta\"", authorizationStatus: status)))
        }
    }

    @Test func everyDelegateEventRoundTrips() throws {
        let cases: [(Engine.Event, ServerEvent)] =
            [
                (.didGetFirstLocation(fullLocation), .didGetFirstLocation(fullLocation)),
                (.didGetFirstLocation(minimalLocation), .didGetFirstLocation(minimalLocation)),
                (
                    .didUpdateLocation(minimalLocation, afterTimeInterval: nil),
                    .didUpdateLocation(minimalLocation, afterTimeInterval: nil)
                ),
                // Milliseconds on the wire.
                (
                    .didUpdateLocation(fullLocation, afterTimeInterval: 300.0004),
                    .didUpdateLocation(fullLocation, afterTimeInterval: 300)
                ),
                (
                    .didGetError(.locationManagerCantDetectFirstLocation),
                    .didGetError(.locationManagerCantDetectFirstLocation)
                ),
            ] + Notification.allCases.map { (.didGetNotification($0), .didGetNotification($0)) }
        for (event, expected) in cases {
            let line = ServerEncoder.event(event)
            #expect(try Self.decode(line) == expected, "\(String(decoding: line, as: UTF8.self))")
        }
    }

    @Test func everyKindOfChangeValueRoundTrips() throws {
        let time = FixTime(secondsSince1970: 1_796_051_351, nanoseconds: 5_000_000)
        let placemark = GeoWire.placemark(
            Placemark(name: "Enkhuizen", locality: "Enkhuizen", coordinate: Coordinate(latitude: 52.7, longitude: 5.29))
        )
        let cases: [(KeyPath, KeyPathValue, KeyPathValue?, JSONValue, JSONValue?)] = [
            (KeyPath(.state), .string("running"), .string("searching"), "running", "searching"),
            (KeyPath(.myLocation, member: .speed), .number(3.5), nil, 3.5, nil),
            (KeyPath(.myLocation, member: .speed), .null, .null, nil, .null),
            (
                KeyPath(.myLocation, member: .coordinate), .coordinate(latitude: 1.5, longitude: -2), nil,
                ["latitude": 1.5, "longitude": -2.0], nil
            ),
            (KeyPath(.rawLocation, member: .timestamp), .time(time), nil, "2026-11-30T15:09:11.005Z", nil),
            (KeyPath(.myPlacemark), .json(placemark.jsonBytes), .null, placemark, .null),
            (KeyPath(.regions), .names(["Haven", "Werf"]), .names([]), ["Haven", "Werf"], []),
        ]
        for (keyPath, new, old, expectedNew, expectedOld) in cases {
            let line = ServerEncoder.event(.change(keyPath: keyPath, new: new, old: old))
            let expected = ServerEvent.change(.init(keyPath: keyPath, new: expectedNew, old: expectedOld))
            #expect(try Self.decode(line) == expected, "\(String(decoding: line, as: UTF8.self))")
        }
        let line = ServerEncoder.event(.change(keyPath: KeyPath(.myLocation), new: .location(fullLocation), old: nil))
        guard case .change(let change) = try Self.decode(line) else {
            Issue.record("not a change")
            return
        }
        #expect(change.newLocation == fullLocation && change.old == nil)
        #expect(try Self.decode(line).location == fullLocation)
    }

    @Test func regionEventsRoundTrip() throws {
        let region = RegionMonitor.Region(name: Self.home.name, center: Self.home.coordinate, radius: 250)
        let entered = ServerEncoder.event(
            .didCrossRegion(
                ServerEncoder.regionCrossing(
                    .didEnter(region, at: Instant(nanoseconds: 0)), place: Self.home, location: fullLocation)))
        #expect(
            try Self.decode(entered)
                == .didEnterRegion(.init(name: Self.home.name, place: Self.home, location: fullLocation)))
        // A place deleted in the same step goes out by name alone.
        let left = ServerEncoder.event(
            .didCrossRegion(
                ServerEncoder.regionCrossing(
                    .didExit(region, at: Instant(nanoseconds: 0)), place: nil, location: minimalLocation)))
        #expect(
            String(decoding: left, as: UTF8.self).hasPrefix(
                #"{"event":"didExitRegion","place":{"name":"Haven \"Oost\""}"#))
        #expect(
            try Self.decode(left) == .didExitRegion(.init(name: Self.home.name, place: nil, location: minimalLocation)))
    }

    @Test func visitEventsRoundTrip() throws {
        let visit = Visit(
            arrival: FixTime(secondsSince1970: 1_764_486_131), departure: FixTime(secondsSince1970: 1_764_502_205),
            coordinate: Coordinate(latitude: 52.7012, longitude: 5.2871), radius: 7.4, place: "Home")
        var writer = JSONWriter(capacity: 256)
        writer.value(visit.json)
        let line = ServerEncoder.event(.didVisit(writer.bytes))
        #expect(
            String(decoding: line, as: UTF8.self)
                == #"{"event":"didVisit","visit":{"arrival":"2025-11-30T07:02:11.000Z","coordinate":{"latitude":52.7012,"longitude":5.2871},"departure":"2025-11-30T11:30:05.000Z","place":"Home","radius":7.4}}"#
                + "\n")
        #expect(try Self.decode(line) == .didVisit(visit))
        #expect(Self.failure(#"{"event":"didVisit","visit":{}}"#)?.message == #"didVisit: "visit.arrival" is missing"#)
        #expect(throws: ProtocolError.self) { try ServerEvent.decode(Array(#"{"event":"didVisit"}"#.utf8)).get() }
    }

    @Test func everyReplyRoundTrips() throws {
        let cases: [([UInt8], RequestID?, Result<JSONValue, ProtocolError>)] = [
            (ServerEncoder.reply(id: 1, .success(.done)), 1, .success(nil)),
            (ServerEncoder.reply(id: "a", .success(.value(.number(2)))), "a", .success(2.0)),
            (ServerEncoder.reply(id: .double(2.5), .success(.value(.names(["x"])))), .double(2.5), .success(["x"])),
            (
                ServerEncoder.reply(id: nil, .success(.authorization(.authorizedAlways))), nil,
                .success(["authorizationStatus": "authorizedAlways"])
            ),
            (
                ServerEncoder.reply(id: 3, .failure(EngineError(.timeout, "no fix within 10 s"))), 3,
                .failure(ProtocolError(.timeout, "no fix within 10 s", id: 3))
            ),
            (
                ServerEncoder.reply(error: ProtocolError(.unknownOp, "unknown op \"fly\"", id: "x")), "x",
                .failure(ProtocolError(.unknownOp, "unknown op \"fly\"", id: "x"))
            ),
            (
                ServerEncoder.reply(error: ProtocolError(.lineTooLong, "line longer than 65536 bytes")), nil,
                .failure(ProtocolError(.lineTooLong, "line longer than 65536 bytes"))
            ),
            (ServerEncoder.replyDone(id: 4), 4, .success(nil)),
            (ServerEncoder.reply(id: 5, result: ["countries": []]), 5, .success(["countries": []])),
            (ServerEncoder.reply(id: 6, .done), 6, .success(nil)),
            (ServerEncoder.reply(id: 7, .names(["Haven"])), 7, .success(["places": ["Haven"]])),
        ]
        for (line, id, result) in cases {
            #expect(try Self.decode(line) == .reply(id: id, result: result), "\(String(decoding: line, as: UTF8.self))")
        }
        // Results with a type of their own decode through it.
        guard
            case .reply(_, .success(let location)) = try Self.decode(
                ServerEncoder.reply(id: 1, .success(.location(fullLocation))))
        else {
            Issue.record("not a reply")
            return
        }
        #expect(try Location(wire: location) == fullLocation)
        guard case .reply(_, .success(let saved)) = try Self.decode(ServerEncoder.reply(id: 1, .place(Self.home))),
            case .reply(_, .success(let listed)) = try Self.decode(
                ServerEncoder.reply(id: 1, .places([Self.home, Self.home])))
        else {
            Issue.record("not a reply")
            return
        }
        #expect(try SavedPlace(json: saved["place"]!) == Self.home)
        #expect(try listed["places"]?.arrayValue?.map { try SavedPlace(json: $0) } == [Self.home, Self.home])
        let points = [
            TrackPoint(location: fullLocation, segment: 3), TrackPoint(location: minimalLocation, segment: 4),
        ]
        let track = ServerEncoder.trackReply(
            id: 8, points: points, next: "c1", byteBudget: 1 << 16, cursorAfter: { "\($0)" })
        guard case .reply(id: 8, result: .success(let page)) = try Self.decode(track) else {
            Issue.record("not a reply")
            return
        }
        #expect(TrackPage(json: page) == TrackPage(points: points, next: "c1"))
    }

    // MARK: - Newer daemons

    @Test func whatANewerDaemonAddsIsUnknownNotAnError() throws {
        let lines = [
            #"{"event":"didDetectActivity","activity":"walking"}"#,
            #"{"event":"didGetNotification","notification":"somethingNew"}"#,
            #"{"event":"didGetError","error":"somethingWrong"}"#,
            #"{"event":"change","keyPath":"jammingIndicator","new":12}"#,
        ]
        for text in lines {
            let json = try JSONValue.parse(Array(text.utf8)).get()
            let name = json["event"]!.stringValue!
            #expect(try ServerEvent.decode(Array(text.utf8)).get() == .unknown(name: name, fields: json.objectValue!))
        }
        // Members a known event does not have are ignored.
        let extended = #"{"event":"didGetNotification","notification":"paused","reason":"admin","since":5}"#
        #expect(try ServerEvent.decode(Array(extended.utf8)).get() == .didGetNotification(.paused))
    }

    // MARK: - Bad input

    @Test func garbageIsRefused() {
        for text in ["", "not json", "\u{0}", "{", "[1,2,3]", "42", "\"hello\"", "null", "{}", "{\"event\":null}"] {
            let error = Self.failure(text)
            #expect(error != nil, "\(text) was accepted")
            #expect(error?.code == .badJSON || error?.code == .badRequest, "\(text): \(String(describing: error))")
        }
        #expect(Self.failure("{}")?.message == "missing \"ok\"")
    }

    @Test func everyTruncationOfEveryLineIsRefused() {
        let lines: [[UInt8]] = [
            ServerEncoder.hello(authorizationStatus: .denied),
            ServerEncoder.event(.didUpdateLocation(fullLocation, afterTimeInterval: 5)),
            ServerEncoder.event(.change(keyPath: KeyPath(.regions), new: .names(["a"]), old: .null)),
            ServerEncoder.event(
                .didCrossRegion(
                    ServerEncoder.regionCrossing(
                        .didEnter(
                            .init(name: "Haven", center: Self.home.coordinate, radius: 1), at: Instant(nanoseconds: 0)),
                        place: Self.home, location: minimalLocation))),
            ServerEncoder.reply(id: "x", error: ProtocolError(.badRequest, "no")),
            ServerEncoder.replyDone(id: 1),
        ]
        for line in lines {
            let body = line.dropLast()
            for length in 0..<body.count {
                guard case .failure = ServerEvent.decode(body.prefix(length)) else {
                    Issue.record("accepted: \(String(decoding: body.prefix(length), as: UTF8.self))")
                    break
                }
            }
        }
    }

    /// Each wrong member is refused with a message that names it.
    @Test(arguments: [
        (#"{"event":1}"#, #""event" must be a string"#),
        (#"{"event":"hello","protocol":"1","version":"1","authorizationStatus":"denied"}"#, #""protocol""#),
        (#"{"event":"hello","version":"1","authorizationStatus":"denied"}"#, #"missing "protocol""#),
        (#"{"event":"hello","protocol":2,"version":"9","authorizationStatus":"x"}"#, "speaks protocol 2"),
        (#"{"event":"hello","protocol":1,"version":3,"authorizationStatus":"denied"}"#, #""version""#),
        (#"{"event":"hello","protocol":1,"version":"1","authorizationStatus":"maybe"}"#, #""authorizationStatus""#),
        (#"{"event":"didGetFirstLocation"}"#, #"missing "location""#),
        (#"{"event":"didUpdateLocation","location":"here"}"#, #""location" must be a location object"#),
        (#"{"event":"didUpdateLocation","location":{"latitude":"north"}}"#, #""location.latitude""#),
        (
            #"{"event":"didUpdateLocation","location":{"latitude":91,"longitude":0,"mode":"3d"}}"#,
            #""location.latitude""#
        ),
        (
            #"{"event":"didUpdateLocation","location":{"latitude":1,"longitude":-181,"mode":"3d"}}"#,
            "location.longitude"
        ),
        (#"{"event":"didUpdateLocation","location":{"latitude":1,"longitude":1}}"#, #"missing "location.mode""#),
        (#"{"event":"didUpdateLocation","location":{"latitude":1,"longitude":1,"mode":"4d"}}"#, "location.mode"),
        (
            #"{"event":"didUpdateLocation","location":{"latitude":1,"longitude":1,"mode":"3d","speed":"fast"}}"#,
            "location.speed"
        ),
        (
            #"{"event":"didUpdateLocation","location":{"latitude":1,"longitude":1,"mode":"3d","timestamp":"noon"}}"#,
            "location.timestamp"
        ),
        (
            #"{"event":"didUpdateLocation","location":{"latitude":1,"longitude":1,"mode":"3d","device":7}}"#,
            "location.device"
        ),
        (
            #"{"event":"didUpdateLocation","location":{"latitude":1,"longitude":1,"mode":"3d"},"afterTimeInterval":"5"}"#,
            "afterTimeInterval"
        ),
        (
            #"{"event":"didUpdateLocation","location":{"latitude":1,"longitude":1,"mode":"3d"},"afterTimeInterval":-1}"#,
            "afterTimeInterval"
        ),
        (#"{"event":"didGetError","error":5}"#, #""error" must be a string"#),
        (#"{"event":"didGetNotification","notification":null}"#, #""notification" must be a string"#),
        (#"{"event":"change","keyPath":3,"new":1}"#, #""keyPath" must be a string"#),
        (#"{"event":"change","keyPath":"state"}"#, #"missing "new""#),
        (
            #"{"event":"didEnterRegion","place":"home","location":{"latitude":1,"longitude":1,"mode":"3d"}}"#,
            #""place""#
        ),
        (
            #"{"event":"didEnterRegion","place":{"name":3},"location":{"latitude":1,"longitude":1,"mode":"3d"}}"#,
            "place.name"
        ),
        (
            #"{"event":"didExitRegion","place":{"name":"a","radius":"big"},"location":{"latitude":1,"longitude":1,"mode":"3d"}}"#,
            "place."
        ),
        (#"{"event":"didExitRegion","place":{"name":"a"}}"#, #"missing "location""#),
        (#"{"ok":"yes"}"#, #""ok""#),
        (#"{"id":[1],"ok":true,"result":null}"#, #""id""#),
        (#"{"id":1,"ok":true}"#, #"missing "result""#),
        (#"{"id":1,"ok":false,"error":"x"}"#, #""error""#),
        (#"{"id":1,"ok":false,"error":{"code":5,"message":"m"}}"#, #""error.code""#),
        (#"{"id":1,"ok":false,"error":{"code":"timeout"}}"#, #"missing "error.message""#),
    ])
    func wrongMembersAreNamed(line: String, named: String) {
        guard let error = Self.failure(line) else {
            Issue.record("accepted: \(line)")
            return
        }
        #expect(error.code == .badRequest, "\(line)")
        #expect(error.message.contains(named), "\(line): \(error.message)")
    }

    @Test func oversizeInputIsRefused() throws {
        // Longer than a client reads, however valid.
        let padding = String(repeating: "x", count: ServerEvent.maxLineLength)
        let long = #"{"event":"didGetNotification","notification":"paused","pad":"\#(padding)"}"#
        #expect(Self.failure(long)?.code == .lineTooLong)
        // Just under the limit is fine.
        let fits = #"{"event":"didGetNotification","notification":"paused","pad":""#
        let filler = String(repeating: "x", count: ServerEvent.maxLineLength - fits.utf8.count - 2)
        #expect(try ServerEvent.decode(Array((fits + filler + "\"}").utf8)).get() == .didGetNotification(.paused))
        // Nesting past the parser's depth and numbers past a double.
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(Self.failure(#"{"id":1,"ok":true,"result":\#(deep)}"#)?.code == .badJSON)
        #expect(Self.failure(#"{"id":1e400,"ok":true,"result":null}"#)?.code == .badJSON)
        let huge = #"{"event":"didGetFirstLocation","location":{"latitude":1e400,"longitude":0,"mode":"3d"}}"#
        #expect(Self.failure(huge)?.code == .badJSON)
    }
}
