import AklocJSON
import AklocProtocol
import Testing

/// "Bad input, named first": every op's arguments are checked by the request
/// decoder, before the daemon looks at its state (a fix, a right, a place, the
/// geo data, the track). The daemon only ever sees decoded requests, so an op
/// with a bad argument cannot be answered `unavailable`, `notAuthorized`,
/// `forbidden` or `notFound` first: it is `badRequest` (or `unknownKeyPath`)
/// naming the argument. One row per argument of every op that takes one.
@Suite struct ArgumentsFirstTests {
    @Test(arguments: [
        // Engine ops.
        (#"{"op":"startUpdatingLocation","policy":{"minInterval":-1}}"#, "minInterval"),
        (#"{"op":"startUpdatingLocation","everyEpoch":"yes"}"#, "everyEpoch"),
        (#"{"op":"observe","keyPath":"myLocation.sped"}"#, "sped"),
        (#"{"op":"observe","keyPath":"state","options":["new"]}"#, "observe option"),
        (#"{"op":"observe","keyPath":"myLocation","policy":{"maxInterval":"x"}}"#, "maxInterval"),
        (#"{"op":"unobserve"}"#, "keyPath"),
        (#"{"op":"get","keyPath":7}"#, "keyPath"),
        (#"{"op":"requestLocation","timeout":0}"#, "timeout"),
        (#"{"op":"requestAuthorization","type":"sometimes"}"#, "type"),
        (#"{"op":"configure","policy":{"speed":1}}"#, "speed"),
        // Admin ops: refused for their arguments before the admin check.
        (#"{"op":"authorize","subject":"-rf","status":"always"}"#, "subject"),
        (#"{"op":"authorize","subject":"alice","status":"maybe"}"#, "status"),
        (#"{"op":"clearTrack","before":"yesterday"}"#, "before"),
        // The track: before the authorization and the recorder.
        (#"{"op":"track","since":"2026-02-30"}"#, "since"),
        (#"{"op":"track","since":"2026-12-02","until":"2026-12-01"}"#, "since"),
        (#"{"op":"track","limit":0}"#, "limit"),
        (#"{"op":"track","after":""}"#, "after"),
        (#"{"op":"track","simplify":-1}"#, "simplify"),
        // Geo lookups: before the geo data and the current fix.
        (#"{"op":"reverseGeocode","coordinate":{"latitude":91,"longitude":0}}"#, "coordinate.latitude"),
        (#"{"op":"searchPlaces","query":"!?"}"#, "query"),
        (#"{"op":"searchPlaces","query":"x","near":{"latitude":0}}"#, "near.longitude"),
        (#"{"op":"searchPlaces","query":"x","within":-1}"#, "within"),
        (#"{"op":"searchPlaces","query":"x","limit":101}"#, "limit"),
        (#"{"op":"countries","code":"N1"}"#, "code"),
        (#"{"op":"countries","phoneCode":"+0"}"#, "phoneCode"),
        (#"{"op":"countries","query":"--"}"#, "query"),
        (#"{"op":"countries","locale":"../../etc"}"#, "locale"),
        // Saved places: before the fix, the admin right for `shared`, the places themselves.
        (#"{"op":"savePlace","name":""}"#, "name"),
        (#"{"op":"savePlace","name":"","shared":true}"#, "name"),
        (#"{"op":"savePlace","name":"a","radius":0}"#, "radius"),
        (#"{"op":"savePlace","name":"a","note":"\u0007"}"#, "note"),
        (#"{"op":"deletePlace","name":""}"#, "name"),
        (#"{"op":"startMonitoring","places":[""]}"#, "places"),
        (#"{"op":"stopMonitoring","places":["\u0000"]}"#, "places"),
    ])
    func everyOpsArgumentsAreCheckedByTheDecoder(line: String, named: String) {
        guard case .failure(let error) = ClientRequest.decode(Array(line.utf8)) else {
            Issue.record("decoded: \(line)")
            return
        }
        #expect(error.code == .badRequest || error.code == .unknownKeyPath, "\(line): \(error)")
        #expect(error.message.contains(named), "\(line): \(error.message)")
    }

    /// Within an op, the first bad argument in the order docs/protocol.md
    /// lists them is the one named.
    @Test(arguments: [
        (#"{"op":"savePlace","name":"","coordinate":{"latitude":99,"longitude":0},"radius":0}"#, "\"name\""),
        (#"{"op":"savePlace","name":"a","coordinate":{"latitude":99,"longitude":0},"radius":0}"#, "coordinate"),
        (#"{"op":"savePlace","name":"a","radius":0,"note":"\u0007"}"#, "\"radius\""),
        (#"{"op":"searchPlaces","query":"!","limit":0}"#, "\"query\""),
        (#"{"op":"track","since":"x","limit":0}"#, "\"since\""),
    ])
    func theFirstBadArgumentIsNamed(line: String, named: String) {
        guard case .failure(let error) = ClientRequest.decode(Array(line.utf8)) else {
            Issue.record("decoded: \(line)")
            return
        }
        #expect(error.message.contains(named), "\(line): \(error.message)")
    }
}
