import AklocCore
import AklocProtocol
import Testing

/// The `visits` and `trips` requests on the wire: round trips, and every
/// kind of bad input refused with `badRequest` naming the member.
@Suite struct TimelineRequestTests {
    @Test func requestsRoundTrip() throws {
        let query = TimelineQuery(
            since: FixTime(secondsSince1970: 1_780_000_000, nanoseconds: 250_000_000),
            until: FixTime(secondsSince1970: 1_780_086_400))
        for operation in [ClientRequest.Operation.visits(query), .trips(query), .visits(TimelineQuery())] {
            let request = ClientRequest(id: .int(3), operation: operation)
            let line = request.encodedLine()
            #expect(try ClientRequest.decode(line.dropLast()).get() == request)
        }
        let decoded = try ClientRequest.decode(Array(#"{"op":"visits","since":"2026-05-28","until":1780000000}"#.utf8))
            .get()
        #expect(
            decoded.operation
                == .visits(
                    TimelineQuery(
                        since: FixTime(secondsSince1970: 1_779_926_400), until: FixTime(secondsSince1970: 1_780_000_000)
                    )))
    }

    @Test(arguments: [
        (#"{"op":"visits","since":"2026-02-30"}"#, "since"),
        (#"{"op":"visits","since":"2026-13-01"}"#, "since"),
        (#"{"op":"trips","until":"yesterday"}"#, "until"),
        (#"{"op":"trips","until":true}"#, "until"),
        (#"{"op":"visits","since":-5}"#, "since"),
        (#"{"op":"visits","since":1e300}"#, "since"),
        (#"{"op":"visits","since":{"a":1}}"#, "since"),
        (#"{"op":"visits","since":"2026-12-02","until":"2026-12-01"}"#, "since"),
        (#"{"op":"trips","since":"2026-01-01","until":"2026-12-01"}"#, "until"),
        (#"{"op":"visits","since":"2026-12-01T25:00"}"#, "since"),
        (#"{"op":"visits","since":""# + String(repeating: "9", count: 5000) + #""}"#, "since"),
    ])
    func badInputIsABadRequestNamingTheMember(line: String, member: String) {
        guard case .failure(let error) = ClientRequest.decode(Array(line.utf8)) else {
            Issue.record("\(line.prefix(80)) was accepted")
            return
        }
        #expect(error.code == .badRequest, "\(error)")
        #expect(error.message.contains("\"\(member)\""), "\(error.message)")
    }

    @Test func truncatedAndGarbageLinesAreRefused() {
        let line = Array(#"{"op":"trips","since":"2026-11-30","until":"2026-12-01"}"#.utf8)
        for end in 1..<line.count {
            guard case .failure(let error) = ClientRequest.decode(line[..<end]) else {
                Issue.record("a truncated line was accepted: \(String(decoding: line[..<end], as: UTF8.self))")
                continue
            }
            #expect(error.code == .badJSON)
        }
        guard case .failure = ClientRequest.decode([0xFF, 0xFE, 0x00]) else {
            Issue.record("garbage was accepted")
            return
        }
    }
}
