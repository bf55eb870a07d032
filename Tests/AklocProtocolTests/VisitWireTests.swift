import AklocCore
import AklocGeo
import AklocJSON
import AklocProtocol
import Testing

/// `Visit(json:)` against `Visit.json`: what the daemon writes reads back
/// whole, and what a broken daemon could send instead is refused naming
/// the member (the clients' `didVisit` and `visit` key path read it).
@Suite struct VisitWireTests {
    static let zone = TimeZoneInfo(
        identifier: "Europe/Amsterdam", abbreviation: "CET", secondsFromGMT: 3600, isDaylightSavingTime: false)

    /// Every member set, as a visit at a saved place with geo data.
    static let full = Visit(
        arrival: FixTime(secondsSince1970: 1_764_486_131, nanoseconds: 250_000_000),
        departure: FixTime(secondsSince1970: 1_764_502_205),
        coordinate: Coordinate(latitude: 52.7012, longitude: 5.2871),
        radius: 7.4,
        placemark: Placemark(
            name: "Enkhuizen", locality: "Enkhuizen", subAdministrativeArea: "Enkhuizen",
            administrativeArea: "North Holland", isoCountryCode: "NL", country: "Netherlands",
            timeZone: "Europe/Amsterdam", coordinate: Coordinate(latitude: 52.70333, longitude: 5.29167), distance: 600,
            bearing: 245.5),
        place: "Home \"Oost\"",
        country: Country(
            code: "NL", alpha3: "NLD", numeric: "528", name: "Netherlands", officialName: "Kingdom of the Netherlands",
            phoneCode: "+31"),
        timeZone: zone)

    static func reread(_ visit: Visit) throws -> Visit {
        var writer = JSONWriter(capacity: 1024)
        writer.value(visit.json)
        return try Visit(json: JSONValue.parse(writer.bytes).get())
    }

    @Test func whatTheDaemonWritesReadsBackWhole() throws {
        #expect(try Self.reread(Self.full) == Self.full)
        let underWay = Visit(
            arrival: FixTime(secondsSince1970: 1_764_486_131), departure: nil,
            coordinate: Coordinate(latitude: -33.9, longitude: 151.2), radius: 0)
        #expect(try Self.reread(underWay) == underWay)
        // A newer daemon's members, and `null` for an absent departure, are fine.
        var json = try #require(underWay.json.objectValue)
        json["departure"] = .null
        json["mood"] = "calm"
        #expect(try Visit(json: .object(json)) == underWay)
    }

    @Test func garbageIsRefusedNamingTheMember() throws {
        let good = try #require(Self.full.json.objectValue)
        func message(_ change: (inout [String: JSONValue]) -> Void) -> String? {
            var members = good
            change(&members)
            do {
                _ = try Visit(json: .object(members))
                return nil
            } catch {
                #expect(error.code == .badRequest)
                return error.message
            }
        }
        #expect(message { $0["arrival"] = nil } == #""visit.arrival" is missing"#)
        #expect(message { $0["arrival"] = "yesterday" } == #""visit.arrival" is not an ISO 8601 time"#)
        #expect(message { $0["arrival"] = 1_764_486_131 } == #""visit.arrival" is not an ISO 8601 time"#)
        #expect(
            message { $0["departure"] = "2025-11-30T07:00:00Z" }
                == #""visit.departure" is before the arrival (2025-11-30T07:02:11.250Z)"#)
        #expect(message { $0["coordinate"] = "52,5" } == #""visit.coordinate" is not an object"#)
        #expect(message { $0["coordinate"] = ["latitude": 52] } == #""visit.coordinate.longitude" is missing"#)
        #expect(
            message { $0["coordinate"] = ["latitude": 91, "longitude": 5] }
                == #""visit.coordinate.latitude" is not from -90 to 90"#)
        #expect(message { $0["radius"] = "7 m" } == #""visit.radius" is not a number"#)
        #expect(message { $0["radius"] = -1 } == #""visit.radius" is not a number of metres ≥ 0"#)
        #expect(message { $0["place"] = ["name": "Home"] } == #""visit.place" is not a string"#)
        #expect(message { $0["placemark"] = [1, 2] } == #""visit.placemark" is not an object"#)
        #expect(
            message { $0["placemark"]?.remove("coordinate") } == #""visit.placemark.coordinate" is missing"#)
        #expect(message { $0["placemark"]?.set("locality", 7) } == #""visit.placemark.locality" is not a string"#)
        #expect(
            message { $0["placemark"]?.set("timeZone", ["abbreviation": "CET"]) }
                == #""visit.placemark.timeZone.identifier" is missing"#)
        #expect(message { $0["country"]?.remove("code") } == #""visit.country.code" is missing"#)
        #expect(
            message { $0["timeZone"]?.set("secondsFromGMT", 3600.5) }
                == #""visit.timeZone.secondsFromGMT" is not an integer"#)
        #expect(
            message { $0["timeZone"]?.set("isDaylightSavingTime", "no") }
                == #""visit.timeZone.isDaylightSavingTime" is not a boolean"#)
        for garbage: JSONValue in [.null, "visit", 7, [], ["arrival": .null]] {
            #expect(throws: ProtocolError.self) { try Visit(json: garbage) }
        }
    }
}

extension JSONValue {
    fileprivate mutating func remove(_ key: String) {
        guard case .object(var members) = self else { return }
        members[key] = nil
        self = .object(members)
    }

    fileprivate mutating func set(_ key: String, _ value: JSONValue) {
        guard case .object(var members) = self else { return }
        members[key] = value
        self = .object(members)
    }
}
