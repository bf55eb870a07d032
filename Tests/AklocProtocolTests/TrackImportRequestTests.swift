import AklocCore
import AklocJSON
import AklocProtocol
import Testing

@Suite struct TrackImportRequestTests {
    @Test func pointsRoundTripExactly() throws {
        let points = [
            ImportPoint(
                time: FixTime(secondsSince1970: 1_588_327_200, nanoseconds: 123_456_789), latitude: 52.123_456_7,
                longitude: -4.000_000_1, altitude: -12.5, horizontalAccuracy: 3, segment: 4),
            ImportPoint(time: FixTime(secondsSince1970: 0), latitude: -90, longitude: 180),
        ]
        for request in [TrackImportRequest.add(points), .commit, .abort] {
            let line = ClientRequest(id: .int(1), operation: .importTrack(request)).encodedLine()
            let decoded = try ClientRequest.decode(line.dropLast()).get()
            #expect(decoded.operation == .importTrack(request))
            #expect(decoded.operation.isAdmin)
        }
    }

    @Test(arguments: [
        (#"{"op":"importTrack"}"#, #"missing "action""#),
        (#"{"op":"importTrack","action":"go"}"#, #""action" must be "add", "commit" or "abort""#),
        (#"{"op":"importTrack","action":"add"}"#, #""points" must be an array of points, not missing"#),
        (#"{"op":"importTrack","action":"add","points":[]}"#, #""points" must hold 1-10000 points"#),
        (#"{"op":"importTrack","action":"add","points":[[1,2,3]]}"#, #""points[0]" must be [seconds"#),
        (
            #"{"op":"importTrack","action":"add","points":[[1.5,0,1,2,null,null,0]]}"#,
            #""points[0]" seconds must be a whole number"#
        ),
        (
            #"{"op":"importTrack","action":"add","points":[[1,1000000000,1,2,null,null,0]]}"#,
            #""points[0]" nanoseconds must be 0-999999999"#
        ),
        (
            #"{"op":"importTrack","action":"add","points":[[1,0,"1",2,null,null,0]]}"#,
            #""points[0]" latitude must be a number, not a string"#
        ),
        (
            #"{"op":"importTrack","action":"add","points":[[1,0,1,2,null,null,0],[1,0,95,2,null,null,0]]}"#,
            #""points[1]": latitude 95.0 is not in -90...90"#
        ),
        (
            #"{"op":"importTrack","action":"add","points":[[1,0,1,-200,null,null,0]]}"#,
            #""points[0]": longitude -200.0 is not in -180...180"#
        ),
        (
            #"{"op":"importTrack","action":"add","points":[[1,0,1,2,1e9,null,0]]}"#,
            #""points[0]": altitude 1000000000.0 m"#
        ),
        (#"{"op":"importTrack","action":"add","points":[[1,0,1,2,null,-1,0]]}"#, #""points[0]": accuracy -1.0 m"#),
        (
            #"{"op":"importTrack","action":"add","points":[[-1,0,1,2,null,null,0]]}"#,
            #""points[0]": time is not between 1970 and 9999"#
        ),
        (
            #"{"op":"importTrack","action":"add","points":[[1,0,1,2,null,null,-3]]}"#,
            #""points[0]": segment -3 is negative"#
        ),
    ])
    func badRequestsNameTheirField(line: String, message: String) {
        switch ClientRequest.decode(Array(line.utf8)) {
        case .success(let request): Issue.record("\(line) decoded as \(request)")
        case .failure(let error):
            #expect(error.code == .badRequest)
            #expect(error.message.hasPrefix(message), "\(error.message)")
        }
    }
}
