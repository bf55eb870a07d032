import AklocCore
import AklocJSON
import AklocProtocol
import Testing

@Suite struct TrackRequestTests {
    private func failure(_ line: String) -> ProtocolError? {
        guard case .failure(let error) = ClientRequest.decode(Array(line.utf8)) else { return nil }
        return error
    }

    @Test(arguments: [
        (#"{"op":"track","since":"2026-12-02","until":"2026-12-01"}"#, "\"since\""),
        (#"{"op":"track","since":"yesterday"}"#, "\"since\""),
        (#"{"op":"track","until":"2026-13-01"}"#, "\"until\""),
        (#"{"op":"track","until":"2026-02-30"}"#, "\"until\""),
        (#"{"op":"track","since":"2026-12-01T25:00Z"}"#, "\"since\""),
        (#"{"op":"track","since":"2026-12-01T10:00:00Zjunk"}"#, "\"since\""),
        (#"{"op":"track","since":true}"#, "\"since\""),
        (#"{"op":"track","since":-1}"#, "\"since\""),
        (#"{"op":"track","until":1e300}"#, "\"until\""),
        (#"{"op":"track","limit":0}"#, "\"limit\""),
        (#"{"op":"track","limit":100001}"#, "\"limit\""),
        (#"{"op":"track","limit":2.5}"#, "\"limit\""),
        (#"{"op":"track","limit":"10"}"#, "\"limit\""),
        (#"{"op":"track","after":7}"#, "\"after\""),
        (#"{"op":"track","after":""}"#, "\"after\""),
        (#"{"op":"track","simplify":-1}"#, "\"simplify\""),
        (#"{"op":"track","simplify":"far"}"#, "\"simplify\""),
        (#"{"op":"clearTrack","before":{}}"#, "\"before\""),
        (#"{"op":"clearTrack","before":"soon"}"#, "\"before\""),
    ])
    func badArgumentsAreBadRequestsNamingTheField(line: String, field: String) throws {
        let error = try #require(failure(line), "\(line) was accepted")
        #expect(error.code == .badRequest, "\(line)")
        #expect(error.message.contains(field), "\(line): \(error.message)")
    }

    @Test func anOversizeCursorIsRefused() throws {
        let cursor = String(repeating: "d", count: ClientRequest.maxCursorLength + 1)
        let error = try #require(failure(#"{"op":"track","after":"\#(cursor)"}"#))
        #expect(error.code == .badRequest && error.message.contains("\"after\""))
    }

    @Test func timesInEveryAcceptedForm() {
        let noon = FixTime(secondsSince1970: 1_764_590_400)
        #expect(TrackTime.parse("2025-12-01T12:00:00Z") == noon)
        #expect(TrackTime.parse("2025-12-01T12:00Z") == noon)
        #expect(TrackTime.parse("2025-12-01T12:00") == noon)
        #expect(TrackTime.parse("2025-12-01 12:00:00") == noon)
        #expect(TrackTime.parse("2025-12-01T13:00:00+01:00") == noon)
        #expect(TrackTime.parse("2025-12-01T07:30:00-0430") == noon)
        #expect(
            TrackTime.parse("2025-12-01T12:00:00.125Z")
                == FixTime(secondsSince1970: 1_764_590_400, nanoseconds: 125_000_000))
        #expect(TrackTime.parse("2024-02-29") != nil)
        #expect(TrackTime.parse("2026-02-29") == nil)
        #expect(TrackTime.parse("2025-12-01T12") == nil)
        #expect(TrackTime.parse("") == nil)
        #expect(
            TrackTime.fromEpoch(1_764_590_400.5) == FixTime(secondsSince1970: 1_764_590_400, nanoseconds: 500_000_000))
        #expect(TrackTime.fromEpoch(.nan) == nil)
    }

    /// The CLI's `--since 2h` is not a whole millisecond: the request keeps
    /// every nanosecond, so the daemon reads back exactly what was meant.
    @Test func timesOfEveryPrecisionRoundTripExactly() throws {
        let times = [
            FixTime(secondsSince1970: 1_764_590_400, nanoseconds: 123_456_789),
            FixTime(secondsSince1970: 1_764_590_400, nanoseconds: 250_000_000), FixTime(secondsSince1970: 0),
            FixTime(secondsSince1970: 0, nanoseconds: 1),
            FixTime(secondsSince1970: TrackTime.maxSeconds, nanoseconds: 999_999_999),
        ]
        for time in times {
            let operations: [ClientRequest.Operation] = [
                .track(TrackQuery(since: time, until: time, limit: 1, after: "d1.i2.o3.c4")),
                .track(TrackQuery(until: time)), .clearTrack(before: time),
            ]
            for operation in operations {
                let request = ClientRequest(id: 9, operation: operation)
                let line = request.encodedLine()
                #expect(
                    try ClientRequest.decode(line.dropLast()).get() == request,
                    "\(String(decoding: line, as: UTF8.self))")
            }
        }
    }

    /// `akloc track` checks its times with the daemon's own rule: the same
    /// error, word for word, as the daemon's reply to the same member.
    @Test func theSharedTimeRuleRefusesAsTheDecoderDoes() throws {
        let values: [JSONValue] = ["2026-13-01", "2026-02-30T10:00Z", "yesterday", -1, 1e300, true, ["x": 1]]
        for value in values {
            let line = #"{"op":"track","until":\#(value.jsonString)}"#
            let decoded = try #require(failure(line), "\(line) was accepted")
            #expect(throws: decoded, "\(line)") { try TrackTime.decode(value, field: "until") }
        }
        #expect(try TrackTime.decode(nil, field: "until") == nil)
        #expect(try TrackTime.decode(.null, field: "until") == nil)
        #expect(try TrackTime.decode(1.5, field: "until") == FixTime(secondsSince1970: 1, nanoseconds: 500_000_000))
    }

    @Test func aPageRoundTrips() throws {
        var location = Location(latitude: 52.5, longitude: 13.4, altitude: 34, speed: 1.5, course: 90)
        location.timestamp = FixTime(secondsSince1970: 1_764_590_400)
        location.receivedAt = FixTime(secondsSince1970: 1_764_590_400, nanoseconds: 20_000_000)
        let points = [TrackPoint(location: location, segment: 1), TrackPoint(location: location, segment: 2)]
        for next in [nil, "d1.i2.o3.c4"] as [String?] {
            let line = ServerEncoder.trackReply(
                id: 5, points: points, next: next, byteBudget: 1 << 20, cursorAfter: { "after\($0)" })
            #expect(line.last == 0x0A)
            let json = try JSONValue.parse(line.dropLast()).get()
            #expect(json["id"] == .int(5) && json["ok"] == .bool(true))
            let result = try #require(json["result"])
            let page = try #require(TrackPage(json: result))
            #expect(page.points.count == 2 && page.next == next)
            #expect(page.points[1].segment == 2)
            var expected = location
            expected.receivedAt = FixTime(secondsSince1970: 1_764_590_400, nanoseconds: 20_000_000)
            #expect(page.points[0].location == expected)
        }
    }

    /// The budget stops a page after the last point that fits, and `next`
    /// then resumes after that point, not after the page.
    @Test func aPageStopsAtTheByteBudgetAndResumesAfterTheLastPointWritten() throws {
        let location = Location(latitude: 52.5, longitude: 13.4, speed: 1.5)
        let points = (0..<100).map { TrackPoint(location: location, segment: UInt64($0)) }
        let line = ServerEncoder.trackReply(
            id: 1, points: points, next: "end", byteBudget: 4096, cursorAfter: { "after\($0)" })
        #expect(line.count <= 4096)
        let result = try #require(try JSONValue.parse(line.dropLast()).get()["result"])
        let page = try #require(TrackPage(json: result))
        #expect(page.points.count > 1 && page.points.count < 100)
        #expect(page.next == "after\(page.points.count - 1)")
        #expect(page.points.map(\.segment) == (0..<UInt64(page.points.count)).map { $0 })
        // The first point is written whatever the budget: a page is never empty.
        let tiny = ServerEncoder.trackReply(id: 1, points: points, next: nil, byteBudget: 1, cursorAfter: { "a\($0)" })
        let tinyResult = try #require(try JSONValue.parse(tiny.dropLast()).get()["result"])
        let one = try #require(TrackPage(json: tinyResult))
        #expect(one.points.count == 1 && one.next == "a0")
    }
}
