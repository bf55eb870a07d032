import AklocProtocol
import Testing

private func geo(_ text: String) throws -> GeoRequest {
    let decoded = try ClientRequest.decode(Array(text.utf8)).get()
    guard case .geo(let request) = decoded.operation else {
        Issue.record("not a geo op: \(decoded)")
        throw ProtocolError(.badRequest, "not geo")
    }
    return request
}

private func refusal(_ text: String) -> ProtocolError? {
    if case .failure(let error) = ClientRequest.decode(Array(text.utf8)) { return error }
    return nil
}

@Suite struct GeoRequestDecodingTests {
    @Test func defaultsAndArguments() throws {
        #expect(try geo(#"{"op":"reverseGeocode"}"#) == .reverseGeocode(coordinate: nil))
        #expect(
            try geo(#"{"op":"reverseGeocode","coordinate":{"latitude":52.7,"longitude":-5}}"#)
                == .reverseGeocode(coordinate: GeoPoint(latitude: 52.7, longitude: -5)))
        #expect(
            try geo(#"{"op":"searchPlaces","query":"enk"}"#)
                == .searchPlaces(query: "enk", near: nil, within: 10_000, limit: 10))
        #expect(
            try geo(#"{"op":"searchPlaces","query":"enk","near":{"latitude":0,"longitude":0},"within":0,"limit":100}"#)
                == .searchPlaces(query: "enk", near: GeoPoint(latitude: 0, longitude: 0), within: 0, limit: 100))
        #expect(try geo(#"{"op":"countries"}"#) == .countries(.all, locale: nil))
        #expect(try geo(#"{"op":"countries","code":"gbr"}"#) == .countries(.code("gbr"), locale: nil))
        #expect(try geo(#"{"op":"countries","phoneCode":"+1"}"#) == .countries(.phoneCode("+1"), locale: nil))
        #expect(try geo(#"{"op":"countries","phoneCode":"7"}"#) == .countries(.phoneCode("7"), locale: nil))
        #expect(
            try geo(#"{"op":"countries","query":"Deutschland","locale":"de"}"#)
                == .countries(.query("Deutschland"), locale: "de"))
        // null is "not given", as for the other ops.
        #expect(try geo(#"{"op":"reverseGeocode","coordinate":null}"#) == .reverseGeocode(coordinate: nil))
    }

    /// The CLI's encoding decodes back to the same request.
    @Test func encodingRoundTrips() throws {
        let requests: [GeoRequest] = [
            .reverseGeocode(coordinate: nil), .reverseGeocode(coordinate: GeoPoint(latitude: -33.9, longitude: 151.2)),
            .searchPlaces(query: "São \"Paulo\"", near: GeoPoint(latitude: 1, longitude: 2), within: 5000, limit: 3),
            .searchPlaces(query: "x", near: nil, within: 0, limit: 1), .countries(.all, locale: "pt_BR"),
            .countries(.code("NL"), locale: nil), .countries(.phoneCode("+44"), locale: nil),
            .countries(.query("neth"), locale: nil),
        ]
        for request in requests {
            let line = ClientRequest(id: 7, operation: .geo(request)).encodedLine()
            let decoded = try ClientRequest.decode(line.dropLast()).get()
            #expect(decoded == ClientRequest(id: 7, operation: .geo(request)))
        }
    }

    /// Every refusal is `badRequest`, names the member, and keeps the id.
    @Test(arguments: [
        (#"{"id":3,"op":"reverseGeocode","coordinates":{"latitude":1,"longitude":2}}"#, "coordinates"),
        (#"{"id":3,"op":"reverseGeocode","coordinate":{"latitude":1,"longitude":2,"altitude":3}}"#, "altitude"),
        (#"{"id":3,"op":"reverseGeocode","coordinate":{"latitude":90.5,"longitude":2}}"#, "coordinate.latitude"),
        (#"{"id":3,"op":"reverseGeocode","coordinate":{"latitude":-91,"longitude":2}}"#, "coordinate.latitude"),
        (#"{"id":3,"op":"reverseGeocode","coordinate":{"latitude":1,"longitude":180.01}}"#, "coordinate.longitude"),
        (#"{"id":3,"op":"reverseGeocode","coordinate":{"latitude":"52","longitude":5}}"#, "coordinate.latitude"),
        (#"{"id":3,"op":"reverseGeocode","coordinate":{"latitude":null,"longitude":5}}"#, "coordinate.latitude"),
        (#"{"id":3,"op":"reverseGeocode","coordinate":{"latitude":1,"longitude":"NaN"}}"#, "coordinate.longitude"),
        (#"{"id":3,"op":"reverseGeocode","coordinate":{"longitude":5}}"#, "coordinate.latitude"),
        (#"{"id":3,"op":"reverseGeocode","coordinate":[52,5]}"#, "coordinate"),
        (#"{"id":3,"op":"searchPlaces"}"#, "query"),
        (#"{"id":3,"op":"searchPlaces","query":""}"#, "query"),
        (#"{"id":3,"op":"searchPlaces","query":" -- "}"#, "query"),
        (#"{"id":3,"op":"searchPlaces","query":42}"#, "query"),
        (#"{"id":3,"op":"searchPlaces","query":"a","limit":0}"#, "limit"),
        (#"{"id":3,"op":"searchPlaces","query":"a","limit":1000000000}"#, "limit"),
        (#"{"id":3,"op":"searchPlaces","query":"a","limit":2.5}"#, "limit"),
        (#"{"id":3,"op":"searchPlaces","query":"a","limit":"10"}"#, "limit"),
        (#"{"id":3,"op":"searchPlaces","query":"a","within":-1}"#, "within"),
        (#"{"id":3,"op":"searchPlaces","query":"a","within":1e12}"#, "within"),
        (#"{"id":3,"op":"searchPlaces","query":"a","near":{"latitude":0}}"#, "near.longitude"),
        (#"{"id":3,"op":"searchPlaces","query":"a","radius":5}"#, "radius"),
        (#"{"id":3,"op":"countries","code":"G"}"#, "code"),
        (#"{"id":3,"op":"countries","code":"GBRX"}"#, "code"),
        (#"{"id":3,"op":"countries","code":"31"}"#, "code"),
        (#"{"id":3,"op":"countries","code":"Ü1"}"#, "code"),
        (#"{"id":3,"op":"countries","phoneCode":"+1a"}"#, "phoneCode"),
        (#"{"id":3,"op":"countries","phoneCode":"+"}"#, "phoneCode"),
        (#"{"id":3,"op":"countries","phoneCode":"+12345"}"#, "phoneCode"),
        (#"{"id":3,"op":"countries","phoneCode":31}"#, "phoneCode"),
        (#"{"id":3,"op":"countries","code":"NL","query":"neth"}"#, "code"),
        (#"{"id":3,"op":"countries","locale":""}"#, "locale"),
        (#"{"id":3,"op":"countries","locale":7}"#, "locale"),
        (#"{"id":3,"op":"countries","name":"x"}"#, "name"),
    ])
    func badInput(line: String, field: String) throws {
        let error = try #require(refusal(line), "\(line) was accepted")
        #expect(error.code == .badRequest, "\(line): \(error)")
        #expect(error.message.contains("\"\(field)"), "\(line): \(error.message)")
        #expect(error.id == 3)
    }

    @Test func oversizeQueriesAreRefusedNamingTheField() throws {
        let big = String(repeating: "a", count: 10_240)
        for op in ["searchPlaces", "countries"] {
            let error = try #require(refusal(#"{"id":1,"op":"\#(op)","query":"\#(big)"}"#))
            #expect(error.code == .badRequest)
            #expect(error.message.hasPrefix("\"query\": query is longer than"), "\(error.message)")
        }
    }
}
