import AklocCore
import AklocFeature
import AklocJSON
import AklocProtocol
import AklocTestSupport
import FoundationEssentials
import Testing

@testable import AklocGeoService

/// `GeoFeature` against a fake host on virtual time, with the committed
/// data in data/: the lookups it answers, the describer it hands the
/// engine, and what it says when there is no data.
@Suite struct GeoFeatureTests {
    static let dataDirectory = Binaries.packageRoot.appendingPathComponent("data").path
    /// On the Enkhuizen waterfront (the IJsselmeer trip of the integration tests).
    static let enkhuizen = GeoPoint(latitude: 52.7033, longitude: 5.2917)

    let host = FakeHost()

    func started(dataDirectory: String = GeoFeatureTests.dataDirectory) throws -> GeoFeature {
        var settings = GeoSettings()
        settings.dataDirectory = dataDirectory
        let feature = try #require(host.sync { GeoFeature.make(settings, host: host) })
        try host.sync { try feature.start() }
        return feature
    }

    func ask(_ feature: GeoFeature, _ request: GeoRequest, from client: FeatureClient) throws
        -> Result<JSONValue, ProtocolError>
    {
        switch try #require(feature.answer(.geo(request), id: .int(4), from: client)) {
        case .success(let line):
            let json = try JSONValue.parse(line.dropLast()).get()
            #expect(json["id"] == .int(4))
            return .success(try #require(json["result"]))
        case .failure(let error):
            return .failure(error)
        }
    }

    @Test func reverseGeocodeOfAGivenCoordinateNeedsNoRight() throws {
        let feature = try started()
        try host.sync {
            let stranger = host.connectClient(status: .notDetermined)
            let result = try ask(feature, .reverseGeocode(coordinate: Self.enkhuizen), from: stranger).get()
            let placemark = try #require(result["placemark"])
            #expect(placemark["locality"] == .string("Enkhuizen"), "\(placemark)")
            #expect(placemark["administrativeArea"] == .string("North Holland"))
            #expect(placemark["isoCountryCode"] == .string("NL"))
            #expect(placemark["country"] == .string("Netherlands"))
            // The zone's offset at the host's wall clock (late May 2026: summer time).
            let zone = try #require(placemark["timeZone"])
            #expect(zone["identifier"] == .string("Europe/Amsterdam"))
            #expect(zone["secondsFromGMT"] == .int(7200))
            #expect(zone["isDaylightSavingTime"] == .bool(true))
            #expect(zone["abbreviation"] == .string("CEST"))
        }
    }

    @Test func theOffsetFollowsTheHostsClock() throws {
        let feature = try started()
        try host.sync {
            let client = host.connectClient(status: .notDetermined)
            // Five months on: winter.
            host.time.advance(by: 150 * 86_400)
            let result = try ask(feature, .reverseGeocode(coordinate: Self.enkhuizen), from: client).get()
            #expect(result["placemark"]?["timeZone"]?["secondsFromGMT"] == .int(3600))
            #expect(result["placemark"]?["timeZone"]?["abbreviation"] == .string("CET"))
        }
    }

    @Test func reverseGeocodeOfTheCurrentFixNeedsWhatMyLocationNeeds() throws {
        let feature = try started()
        try host.sync {
            let user = host.connectClient(status: .authorizedWhenInUse)
            let stranger = host.connectClient(status: .denied)
            let here = GeoRequest.reverseGeocode(coordinate: nil)
            guard case .failure(let none) = try ask(feature, here, from: user) else {
                Issue.record("answered without a fix")
                return
            }
            #expect(none.code == .unavailable)
            #expect(none.message.contains("coordinate"))
            host.fix = Location(latitude: Self.enkhuizen.latitude, longitude: Self.enkhuizen.longitude)
            let found = try ask(feature, here, from: user).get()
            #expect(found["placemark"]?["isoCountryCode"] == .string("NL"))
            guard case .failure(let refused) = try ask(feature, here, from: stranger) else {
                Issue.record("a denied client was told where the fix is")
                return
            }
            #expect(refused.code == .notAuthorized)
        }
    }

    @Test func countriesByCodeInAnyCase() throws {
        let feature = try started()
        try host.sync {
            let client = host.connectClient(status: .notDetermined)
            for code in ["NL", "nl", "NLD"] {
                let result = try ask(feature, .countries(.code(code), locale: nil), from: client).get()
                let countries = try #require(result["countries"]?.arrayValue)
                #expect(countries.count == 1, "\(code)")
                #expect(countries.first?["code"] == .string("NL"))
                #expect(countries.first?["name"] == .string("Netherlands"))
                #expect(countries.first?["alpha3"] == .string("NLD"))
                #expect(countries.first?["phoneCode"] == .string("+31"))
            }
            // A well-formed code of no country: an empty list, not an error.
            let none = try ask(feature, .countries(.code("QZ"), locale: nil), from: client).get()
            #expect(none["countries"]?.arrayValue?.isEmpty == true)
            let all = try ask(feature, .countries(.all, locale: nil), from: client).get()
            #expect((all["countries"]?.arrayValue?.count ?? 0) > 200)
        }
    }

    @Test func theDescriberIsHandedToTheHostAtStart() throws {
        var settings = GeoSettings()
        settings.dataDirectory = Self.dataDirectory
        let feature = try #require(host.sync { GeoFeature.make(settings, host: host) })
        host.sync { #expect(host.describer == nil, "not before the start") }
        try host.sync { try feature.start() }
        let describer = try #require(host.sync { host.describer })
        // As the engine stamps a fix: received at the host's wall clock.
        let derived = describer.describe(
            Location(
                latitude: Self.enkhuizen.latitude, longitude: Self.enkhuizen.longitude,
                receivedAt: host.sync { host.time.wallNow() }))
        guard case .json(let country) = derived.country, case .json(let placemark) = derived.placemark,
            case .json(let zone) = derived.timeZone
        else {
            Issue.record("derived values missing: \(derived)")
            return
        }
        #expect(try JSONValue.parse(country).get()["code"] == .string("NL"))
        #expect(try JSONValue.parse(placemark).get()["locality"] == .string("Enkhuizen"))
        #expect(try JSONValue.parse(zone).get()["identifier"] == .string("Europe/Amsterdam"))
        host.sync {
            #expect(feature.refusal(of: .observe(KeyPath(.myPlacemark), initial: true, old: false, policy: nil)) == nil)
        }
    }

    @Test func withoutDataTheOpsAndTheDerivedKeyPathsAreUnavailableSayingWhy() throws {
        let empty = makeTemporaryDirectory()
        defer { removeTree(empty) }
        let feature = try started(dataDirectory: empty)
        try host.sync {
            #expect(host.describer == nil)
            let warning = try #require(host.messages(at: .warning).first)
            #expect(warning.contains("no geo data") && warning.contains(empty + "/places.bin"), "\(warning)")
            let client = host.connectClient(status: .authorizedAlways)
            host.fix = Location(latitude: 52, longitude: 5)
            let requests: [GeoRequest] = [
                .reverseGeocode(coordinate: Self.enkhuizen), .reverseGeocode(coordinate: nil),
                .countries(.code("NL"), locale: nil),
                .searchPlaces(query: "Enkhuizen", near: nil, within: 10_000, limit: 5),
            ]
            for request in requests {
                guard case .failure(let error) = try ask(feature, request, from: client) else {
                    Issue.record("\(request) answered without data")
                    continue
                }
                #expect(error.code == .unavailable)
                #expect(error.message.contains("no geo data"), "\(error)")
            }
            for root in [KeyPath.Root.myPlacemark, .country, .timeZone] {
                let observe = feature.refusal(of: .observe(KeyPath(root), initial: true, old: false, policy: nil))
                #expect(observe?.code == .unavailable)
                #expect(
                    observe?.message.hasPrefix("\(root.rawValue): no geo data") == true,
                    "\(String(describing: observe))")
                #expect(feature.refusal(of: .get(KeyPath(root)))?.code == .unavailable)
            }
            // What does not need the data is not refused.
            #expect(feature.refusal(of: .get(KeyPath(.myLocation))) == nil)
            #expect(feature.refusal(of: .observe(KeyPath(.regions), initial: true, old: false, policy: nil)) == nil)
            #expect(feature.refusal(of: .startUpdatingLocation(policy: nil, everyEpoch: false)) == nil)
        }
    }

    @Test func otherOpsAreNotItsToAnswer() throws {
        let feature = try started()
        host.sync {
            let client = host.connectClient(status: .authorizedAlways)
            #expect(feature.answer(.status, id: nil, from: client) == nil)
            #expect(feature.answer(.places(.places), id: nil, from: client) == nil)
            feature.apply(GeoSettings())
            #expect(host.messages(at: .notice).contains { $0.contains("[geo] applies at the next restart") })
        }
    }
}
