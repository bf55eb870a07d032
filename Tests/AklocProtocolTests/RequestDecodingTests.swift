import AklocCore
import AklocProtocol
import Testing

private func decode(_ text: String) -> Result<ClientRequest, ProtocolError> {
    ClientRequest.decode(Array(text.utf8))
}

private func request(_ text: String) throws -> ClientRequest {
    try decode(text).get()
}

private func failure(_ text: String) -> ProtocolError? {
    if case .failure(let error) = decode(text) { return error }
    return nil
}

@Suite struct RequestDecodingTests {
    @Test func everyOpDecodes() throws {
        let fast = ThrottlePolicy.Partial(minInterval: 1, maxInterval: 10)
        let cases: [(String, ClientRequest.Operation)] = [
            (#"{"op":"startUpdatingLocation"}"#, .engine(.startUpdatingLocation(policy: nil, everyEpoch: false))),
            (
                #"{"op":"startUpdatingLocation","policy":{"minInterval":1,"maxInterval":10},"everyEpoch":true}"#,
                .engine(.startUpdatingLocation(policy: fast, everyEpoch: true))
            ),
            (#"{"op":"stopUpdatingLocation"}"#, .engine(.stopUpdatingLocation)),
            (
                #"{"op":"observe","keyPath":"myLocation"}"#,
                .engine(.observe(KeyPath(.myLocation), initial: false, old: false, policy: nil))
            ),
            (
                #"{"op":"observe","keyPath":"myLocation.speed","options":["initial","old"],"policy":{"minInterval":1,"maxInterval":10}}"#,
                .engine(.observe(KeyPath(.myLocation, member: .speed), initial: true, old: true, policy: fast))
            ),
            (
                #"{"op":"observe","keyPath":"state","options":["old"]}"#,
                .engine(.observe(KeyPath(.state), initial: false, old: true, policy: nil))
            ),
            (#"{"op":"unobserve","keyPath":"rawLocation"}"#, .engine(.unobserve(KeyPath(.rawLocation)))),
            (
                #"{"op":"get","keyPath":"rawLocation.coordinate"}"#,
                .engine(.get(KeyPath(.rawLocation, member: .coordinate)))
            ),
            (#"{"op":"get","keyPath":"authorizationStatus"}"#, .engine(.get(KeyPath(.authorizationStatus)))),
            (#"{"op":"get","keyPath":"source"}"#, .engine(.get(KeyPath(.source)))),
            (#"{"op":"requestLocation"}"#, .engine(.requestLocation(timeout: 10))),
            (#"{"op":"requestLocation","timeout":2.5}"#, .engine(.requestLocation(timeout: 2.5))),
            (#"{"op":"requestAuthorization","type":"always"}"#, .engine(.requestAuthorization(.always))),
            (#"{"op":"requestAuthorization","type":"whenInUse"}"#, .engine(.requestAuthorization(.whenInUse))),
            (#"{"op":"configure","policy":{"minInterval":1,"maxInterval":10}}"#, .engine(.configure(fast))),
            (#"{"op":"status"}"#, .status),
            (#"{"op":"pause"}"#, .engine(.pause)),
            (#"{"op":"resume"}"#, .engine(.resume)),
            (#"{"op":"reload"}"#, .reload),
            (
                #"{"op":"authorize","subject":"alice","status":"when-in-use"}"#,
                .authorize(subject: "alice", rule: .whenInUse)
            ),
            (
                #"{"op":"authorize","subject":"@staff","status":"deny"}"#,
                .authorize(subject: "@staff", rule: .deny)
            ),
            (#"{"op":"track"}"#, .track(TrackQuery())),
            (
                #"{"op":"track","since":"2025-12-01","until":1764600000,"limit":5,"after":"x","simplify":2.5}"#,
                .track(
                    TrackQuery(
                        since: FixTime(secondsSince1970: 1_764_547_200),
                        until: FixTime(secondsSince1970: 1_764_600_000), limit: 5, after: "x", simplify: 2.5))
            ),
            (#"{"op":"clearTrack"}"#, .clearTrack(before: nil)),
            (
                #"{"op":"clearTrack","before":"2025-12-01T01:00:00+01:00"}"#,
                .clearTrack(before: FixTime(secondsSince1970: 1_764_547_200))
            ),
            (#"{"op":"importTrack","action":"commit"}"#, .importTrack(.commit)),
            (#"{"op":"reverseGeocode"}"#, .geo(.reverseGeocode(coordinate: nil))),
            (
                #"{"op":"searchPlaces","query":"enk"}"#,
                .geo(.searchPlaces(query: "enk", near: nil, within: 10_000, limit: 10))
            ),
            (#"{"op":"countries"}"#, .geo(.countries(.all, locale: nil))),
            (#"{"op":"visits"}"#, .visits(TimelineQuery())),
            (
                #"{"op":"trips","since":1764547200}"#,
                .trips(TimelineQuery(since: FixTime(secondsSince1970: 1_764_547_200)))
            ),
            (#"{"op":"startMonitoringVisits"}"#, .engine(.startMonitoringVisits)),
            (#"{"op":"stopMonitoringVisits"}"#, .engine(.stopMonitoringVisits)),
        ]
        for (line, operation) in cases {
            let decoded = try request(line)
            #expect(decoded.operation == operation, "\(line)")
            #expect(decoded.id == nil)
        }
        let names = Set(cases.map { $0.1.name })
        // The places ops are decoded in PlacesRequestTests.
        #expect(names == Set(ClientRequest.operationNames).subtracting(PlacesRequest.operationNames))
    }

    @Test func everyOpRoundTrips() throws {
        var full = ThrottlePolicy()
        full.updateSpeed = 1.5
        full.minInterval = 0.25
        full.distanceFilter = 12
        full.desiredAccuracy = 30
        let policy = ThrottlePolicy.Partial(full)
        let operations: [ClientRequest.Operation] = [
            .engine(.startUpdatingLocation(policy: nil, everyEpoch: false)),
            .engine(.startUpdatingLocation(policy: policy, everyEpoch: true)),
            .engine(.startUpdatingLocation(policy: .init(minInterval: 2), everyEpoch: false)),
            .engine(.startUpdatingLocation(policy: .init(), everyEpoch: false)),
            .engine(.stopUpdatingLocation),
            .engine(.observe(KeyPath(.myLocation, member: .coordinate), initial: true, old: false, policy: policy)),
            .engine(.observe(KeyPath(.state), initial: false, old: true, policy: nil)),
            .engine(.observe(KeyPath(.rawLocation), initial: true, old: true, policy: nil)),
            .engine(.unobserve(KeyPath(.myLocation))),
            .engine(.get(KeyPath(.myLocation, member: .timestamp))),
            .engine(.requestLocation(timeout: 3)),
            .engine(.requestAuthorization(.always)),
            .engine(.configure(policy)),
            .engine(.configure(.init(distanceFilter: 5, desiredAccuracy: 0))),
            .status, .engine(.pause), .engine(.resume), .reload,
            .authorize(subject: "@akloc-users", rule: .always),
            .track(TrackQuery()),
            .track(
                TrackQuery(
                    since: FixTime(secondsSince1970: 1_764_547_200, nanoseconds: 250_000_000),
                    until: FixTime(secondsSince1970: 1_764_600_000), limit: 100_000, after: "d1.i2.o3.c4",
                    simplify: 0.5)),
            .clearTrack(before: nil), .clearTrack(before: FixTime(secondsSince1970: 0)),
        ]
        let ids: [RequestID?] = [
            nil, 7, -9_007_199_254_740_993, .double(1.5), .double(2), .double(-1e300), "a\"b\n", "",
        ]
        for operation in operations {
            for id in ids {
                let original = ClientRequest(id: id, operation: operation)
                let line = original.encodedLine()
                #expect(line.last == 0x0A)
                #expect(!line.dropLast().contains(0x0A))
                let decoded = try ClientRequest.decode(line.dropLast()).get()
                #expect(decoded == original, "\(String(decoding: line, as: UTF8.self))")
            }
        }
    }

    @Test func idsAreKeptExactly() throws {
        #expect(try request(#"{"id":9007199254740993,"op":"status"}"#).id == .int(9_007_199_254_740_993))
        #expect(try request(#"{"id":-1,"op":"status"}"#).id == .int(-1))
        #expect(try request(#"{"id":1.25,"op":"status"}"#).id == .double(1.25))
        #expect(try request(#"{"id":1e3,"op":"status"}"#).id == .double(1000))
        #expect(try request(#"{"id":"x-1","op":"status"}"#).id == .string("x-1"))
        #expect(try request(#"{"id":null,"op":"status"}"#).id == nil)
        #expect(try request(#"{"op":"status"}"#).id == nil)
        // Larger than Int64: kept as the nearest Double.
        #expect(try request(#"{"id":18446744073709551616,"op":"status"}"#).id == .double(18_446_744_073_709_551_616.0))
    }

    @Test func unknownMembersAreIgnored() throws {
        let decoded = try request(#"{"id":1,"op":"get","keyPath":"state","extra":{"deep":[1,2,3]},"x":null}"#)
        #expect(decoded.operation == .engine(.get(KeyPath(.state))))
    }

    /// Members a policy leaves out stay out: the engine fills them from the
    /// subscriber's default (EngineDeliveryTests), which the decoder cannot know.
    @Test func policiesArePartial() throws {
        #expect(
            try request(#"{"op":"configure","policy":{"minInterval":2}}"#).operation
                == .engine(.configure(.init(minInterval: 2))))
        #expect(try request(#"{"op":"configure","policy":{}}"#).operation == .engine(.configure(.init())))
        // Alone, a minimum above the default maximum (300) is not wrong: the
        // subscriber's maximum may be higher. Both given and crossed is.
        #expect(
            try request(#"{"op":"startUpdatingLocation","policy":{"minInterval":600}}"#).operation
                == .engine(.startUpdatingLocation(policy: .init(minInterval: 600), everyEpoch: false)))
        #expect(throws: ProtocolError.self) {
            try request(#"{"op":"configure","policy":{"minInterval":20,"maxInterval":10}}"#)
        }
        #expect(throws: ProtocolError.self) { try request(#"{"op":"configure","policy":{"distanceFilter":-1}}"#) }
        #expect(throws: ProtocolError.self) { try request(#"{"op":"configure","policy":{"maxInterval":1e12}}"#) }
        #expect(throws: ProtocolError.self) { try request(#"{"op":"configure","policy":{"minInterval":"1"}}"#) }
    }

    @Test func keyPaths() {
        for root in KeyPath.Root.allCases {
            #expect((try? KeyPath(parsing: root.rawValue)) == KeyPath(root))
        }
        for member in KeyPath.Member.allCases {
            #expect((try? KeyPath(parsing: "myLocation.\(member.rawValue)")) == KeyPath(.myLocation, member: member))
            #expect((try? KeyPath(parsing: "rawLocation.\(member.rawValue)")) == KeyPath(.rawLocation, member: member))
            #expect((try? KeyPath(parsing: "state.\(member.rawValue)")) == nil)
        }
        for bad in [
            "", ".", "myLocation.", "myLocation.speed.x", "mylocation", "myLocation.bogus", "state.x", " state",
        ] {
            #expect((try? KeyPath(parsing: bad)) == nil, "\(bad)")
        }
    }

    @Test(arguments: [
        ("", "badJSON"),
        ("{", "badJSON"),
        (#"{"op":"status""#, "badJSON"),
        (#"{"op":"status"} x"#, "badJSON"),
        (#"{"op":"status",}"#, "badJSON"),
        (#"{'op':'status'}"#, "badJSON"),
        ("garbage", "badJSON"),
        (#"{"op":NaN}"#, "badJSON"),
        (#"{"id":01,"op":"status"}"#, "badJSON"),
        (#"{"id":1e999,"op":"status"}"#, "badJSON"),
        (#"{"op":"st\u0000atus"#, "badJSON"),
        ("{\"op\":\"a\tb\"}", "badJSON"),
        (#"{"op":"\ud800"}"#, "badJSON"),
        (#"{"op":"\x"}"#, "badJSON"),
        ("[]", "badRequest"),
        ("42", "badRequest"),
        (#""status""#, "badRequest"),
        ("null", "badRequest"),
        ("{}", "badRequest"),
        (#"{"id":1}"#, "badRequest"),
        (#"{"op":7}"#, "badRequest"),
        (#"{"op":null}"#, "badRequest"),
        (#"{"op":"fly"}"#, "unknownOp"),
        (#"{"op":"Status"}"#, "unknownOp"),
        (#"{"id":true,"op":"status"}"#, "badRequest"),
        (#"{"id":[1],"op":"status"}"#, "badRequest"),
        (#"{"op":"get"}"#, "badRequest"),
        (#"{"op":"get","keyPath":7}"#, "badRequest"),
        (#"{"op":"get","keyPath":["state"]}"#, "badRequest"),
        (#"{"op":"get","keyPath":"altitude"}"#, "unknownKeyPath"),
        (#"{"op":"observe","keyPath":"myLocation.bogus"}"#, "unknownKeyPath"),
        (#"{"op":"observe","keyPath":"state","options":"initial"}"#, "badRequest"),
        (#"{"op":"observe","keyPath":"state","options":["initial","new"]}"#, "badRequest"),
        (#"{"op":"observe","keyPath":"state","options":[1]}"#, "badRequest"),
        (#"{"op":"observe","keyPath":"myLocation","policy":5}"#, "badRequest"),
        (#"{"op":"unobserve","keyPath":null}"#, "badRequest"),
        (#"{"op":"requestLocation","timeout":-1}"#, "badRequest"),
        (#"{"op":"requestLocation","timeout":0}"#, "badRequest"),
        (#"{"op":"requestLocation","timeout":"10"}"#, "badRequest"),
        (#"{"op":"requestLocation","timeout":1e300}"#, "badRequest"),
        (#"{"op":"requestAuthorization"}"#, "badRequest"),
        (#"{"op":"requestAuthorization","type":"sometimes"}"#, "badRequest"),
        (#"{"op":"requestAuthorization","type":"when-in-use"}"#, "badRequest"),
        (#"{"op":"configure"}"#, "badRequest"),
        (#"{"op":"configure","policy":{"minInterval":-1}}"#, "badRequest"),
        (#"{"op":"configure","policy":{"minInterval":"5"}}"#, "badRequest"),
        (#"{"op":"configure","policy":{"minInterval":null}}"#, "badRequest"),
        (#"{"op":"configure","policy":{"maxInterval":1e12}}"#, "badRequest"),
        // (`minInterval` 400 alone is the engine's to refuse, against the subscriber's maximum.)
        (#"{"op":"configure","policy":{"minInterval":400,"maxInterval":300}}"#, "badRequest"),
        (#"{"op":"configure","policy":{"minIntervall":4}}"#, "badRequest"),
        (#"{"op":"configure","policy":[]}"#, "badRequest"),
        (#"{"op":"startUpdatingLocation","everyEpoch":1}"#, "badRequest"),
        (#"{"op":"startUpdatingLocation","policy":{"maxInterval":1e9}}"#, "badRequest"),
        (#"{"op":"authorize","subject":"alice"}"#, "badRequest"),
        (#"{"op":"authorize","subject":"alice","status":"maybe"}"#, "badRequest"),
        (#"{"op":"authorize","subject":"","status":"deny"}"#, "badRequest"),
        (#"{"op":"authorize","subject":"@","status":"deny"}"#, "badRequest"),
        (#"{"op":"authorize","subject":"a\nb","status":"deny"}"#, "badRequest"),
        (#"{"op":"authorize","subject":"a b","status":"deny"}"#, "badRequest"),
        (#"{"op":"authorize","subject":"-rf","status":"deny"}"#, "badRequest"),
        (#"{"op":"authorize","subject":7,"status":"deny"}"#, "badRequest"),
    ])
    func badInput(line: String, code: String) {
        let error = failure(line)
        #expect(error?.code.rawValue == code, "\(line): \(String(describing: error))")
        #expect(error?.message.isEmpty == false)
    }

    @Test func errorsEchoTheID() {
        #expect(failure(#"{"id":5,"op":"fly"}"#)?.id == .int(5))
        #expect(failure(#"{"id":"q","op":"get","keyPath":"nope"}"#)?.id == .string("q"))
        #expect(failure(#"{"id":2.5,"op":"configure","policy":{"minInterval":-1}}"#)?.id == .double(2.5))
        #expect(failure(#"{"id":5,"op":"fly""#)?.id == nil, "no id from broken JSON")
        #expect(failure(#"{"id":{},"op":"status"}"#)?.id == nil)
    }

    @Test func invalidUTF8IsBadJSON() {
        let samples: [[UInt8]] = [
            Array(#"{"op":""#.utf8) + [0xFF] + Array(#""}"#.utf8),
            Array(#"{"op":""#.utf8) + [0xC3] + Array(#""}"#.utf8),
            Array(#"{"op":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8),  // encoded surrogate
            Array(#"{"op":""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8),  // overlong
            [0xEF, 0xBB, 0xBF] + Array(#"{"op":"status"}"#.utf8),  // BOM
            [0x80],
        ]
        for bytes in samples {
            guard case .failure(let error) = ClientRequest.decode(bytes) else {
                Issue.record("accepted \(bytes)")
                continue
            }
            #expect(error.code == .badJSON)
        }
        // Valid multi-byte UTF-8 and escapes are fine.
        let ok = ClientRequest.decode(Array(#"{"id":"ü€😀\u00fc\ud83d\ude00","op":"status"}"#.utf8))
        #expect((try? ok.get())?.id == .string("ü€😀ü😀"))
    }

    @Test func deepNestingDoesNotCrash() {
        for opener in ["[", "{\"a\":"] {
            let line = String(repeating: opener, count: 10_000)
            #expect(failure(line)?.code == .badJSON)
            let wrapped = "{\"op\":\"status\",\"x\":" + String(repeating: opener, count: 100_000)
            #expect(failure(wrapped)?.code == .badJSON)
        }
        // 32 levels are fine.
        let nested = String(repeating: "[", count: 31) + String(repeating: "]", count: 31)
        #expect((try? request("{\"op\":\"status\",\"x\":\(nested)}"))?.operation == .status)
    }

    @Test func truncationsOfAValidRequestAreRejectedNotCrashing() {
        let full = Array(
            #"{"id":12,"op":"observe","keyPath":"myLocation","options":["initial"],"policy":{"minInterval":1.5}}"#.utf8)
        for length in 0..<full.count {
            if case .success = ClientRequest.decode(full[0..<length]) {
                Issue.record("accepted truncation to \(length) bytes")
            }
        }
        #expect((try? ClientRequest.decode(full).get()) != nil)
    }

    @Test func whitespaceAroundIsAllowed() throws {
        #expect(try request(" \t{ \"op\" : \"status\" }\r ").operation == .status)
    }

    @Test func hugeLinesDecodeInReasonableTime() {
        let many = "{\"op\":\"status\",\"pad\":\"" + String(repeating: "a", count: 65_000) + "\"}"
        #expect((try? request(many))?.operation == .status)
        let array = "{\"op\":\"status\",\"pad\":[" + Array(repeating: "1", count: 20_000).joined(separator: ",") + "]}"
        #expect((try? request(array))?.operation == .status)
    }
}
