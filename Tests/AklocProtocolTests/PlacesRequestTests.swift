import AklocJSON
import AklocProtocol
import Testing

@Suite struct PlacesRequestTests {
    func decode(_ line: String) -> Result<ClientRequest, ProtocolError> {
        ClientRequest.decode(Array(line.utf8))
    }

    func places(_ line: String) throws -> PlacesRequest {
        guard case .places(let request) = try decode(line).get().operation else {
            Issue.record("not a places op: \(line)")
            return .places
        }
        return request
    }

    @Test func validRequestsDecode() throws {
        #expect(
            try places(
                #"{"id":1,"op":"savePlace","name":"Haven","coordinate":{"latitude":52.7,"longitude":5.29},"radius":250,"note":"n","shared":true}"#
            )
                == .savePlace(
                    PlaceDraft(name: "Haven", latitude: 52.7, longitude: 5.29, radius: 250, note: "n", shared: true)))
        #expect(try places(#"{"op":"savePlace","name":"Here"}"#) == .savePlace(PlaceDraft(name: "Here")))
        #expect(try places(#"{"op":"places"}"#) == .places)
        #expect(try places(#"{"op":"deletePlace","name":"Haven"}"#) == .deletePlace(name: "Haven"))
        #expect(try places(#"{"op":"startMonitoring"}"#) == .startMonitoring(names: nil))
        #expect(try places(#"{"op":"startMonitoring","places":["a","b"]}"#) == .startMonitoring(names: ["a", "b"]))
        #expect(try places(#"{"op":"stopMonitoring","places":null}"#) == .stopMonitoring(names: nil))
    }

    @Test(arguments: [
        (#"{"op":"savePlace","name":"a","radus":5}"#, "radus"),
        (#"{"op":"savePlace"}"#, "name"),
        (#"{"op":"savePlace","name":7}"#, "name"),
        (#"{"op":"savePlace","name":"a","coordinate":{"latitude":90.5,"longitude":0}}"#, "coordinate.latitude"),
        (#"{"op":"savePlace","name":"a","coordinate":{"latitude":0,"longitude":-180.01}}"#, "coordinate.longitude"),
        (#"{"op":"savePlace","name":"a","coordinate":{"latitude":"NaN","longitude":0}}"#, "coordinate.latitude"),
        (#"{"op":"savePlace","name":"a","coordinate":{"latitude":1e999,"longitude":0}}"#, "coordinate.latitude"),
        (#"{"op":"savePlace","name":"a","coordinate":{"latitude":1}}"#, "coordinate.longitude"),
        (#"{"op":"savePlace","name":"a","coordinate":{"latitude":1,"longitude":2,"alt":3}}"#, "alt"),
        (#"{"op":"savePlace","name":"a","coordinate":[1,2]}"#, "coordinate"),
        (#"{"op":"savePlace","name":"a","radius":"100"}"#, "radius"),
        (#"{"op":"savePlace","name":"a","note":5}"#, "note"),
        (#"{"op":"savePlace","name":"a","shared":"yes"}"#, "shared"),
        (#"{"op":"deletePlace"}"#, "name"),
        (#"{"op":"deletePlace","name":"a","everything":true}"#, "everything"),
        (#"{"op":"places","owner":0}"#, "owner"),
        (#"{"op":"startMonitoring","places":"Haven"}"#, "places"),
        (#"{"op":"startMonitoring","places":[1]}"#, "places"),
        // A place's own rules (SavedPlace's), checked here so the daemon never
        // answers for its state first: no fix, no right, no such place.
        (#"{"op":"savePlace","name":""}"#, "\"name\""),
        (#"{"op":"savePlace","name":"   ","shared":true}"#, "\"name\""),
        (#"{"op":"savePlace","name":"\#(String(repeating: "n", count: 65))"}"#, "\"name\""),
        (#"{"op":"savePlace","name":"bell\u0007"}"#, "\"name\""),
        (#"{"op":"savePlace","name":"","radius":0}"#, "\"name\""),
        (#"{"op":"savePlace","name":"a","radius":0,"note":"\u0000"}"#, "\"radius\""),
        (#"{"op":"savePlace","name":"a","radius":1e9}"#, "\"radius\""),
        (#"{"op":"savePlace","name":"a","note":"\#(String(repeating: "x", count: 1025))"}"#, "\"note\""),
        (#"{"op":"savePlace","name":"a","note":"tab\there\u001b"}"#, "\"note\""),
        (#"{"op":"deletePlace","name":""}"#, "\"name\""),
        (#"{"op":"deletePlace","name":"\#(String(repeating: "n", count: 65))"}"#, "\"name\""),
        (#"{"op":"startMonitoring","places":["Haven",""]}"#, "\"places\""),
        (#"{"op":"stopMonitoring","places":["line\nbreak"]}"#, "\"places\""),
    ])
    func badRequestsNameTheField(line: String, field: String) {
        switch decode(line) {
        case .success(let request):
            Issue.record("accepted \(line) as \(request)")
        case .failure(let error):
            // 1e999 is not a JSON number this parser accepts: badJSON, also refused.
            #expect(error.code == .badRequest || (line.contains("1e999") && error.code == .badJSON), "\(error)")
            if error.code == .badRequest { #expect(error.message.contains(field), "\(error.message)") }
        }
    }

    @Test func tooManyNamesToMonitorAreRefused() {
        let names = (0...PlacesRequest.maxMonitoredNames).map { "\"p\($0)\"" }.joined(separator: ",")
        guard case .failure(let error) = decode(#"{"op":"startMonitoring","places":[\#(names)]}"#) else {
            Issue.record("accepted 1001 names")
            return
        }
        #expect(error.code == .badRequest && error.message.contains("places"))
    }

    @Test func encodedLinesDecodeToTheSameRequest() throws {
        let requests: [PlacesRequest] = [
            .savePlace(
                PlaceDraft(name: "Ha\"ven\\", latitude: -33.5, longitude: 151.25, radius: 1, note: "é", shared: true)),
            .savePlace(PlaceDraft(name: "Here")),
            .places, .deletePlace(name: "x"), .startMonitoring(names: ["a", "b"]), .startMonitoring(names: nil),
            .stopMonitoring(names: []),
        ]
        for request in requests {
            let line = ClientRequest(id: 3, operation: .places(request)).encodedLine()
            let decoded = try ClientRequest.decode(line.dropLast()).get()
            #expect(decoded == ClientRequest(id: 3, operation: .places(request)))
        }
        #expect(ErrorCode.allKnown.contains(.notFound))
        #expect(ClientRequest.operationNames.contains("savePlace"))
    }
}
