import AklocCore
import AklocJSON
import AklocProtocol
import Testing

/// The location's fix-quality members (`fixStatus`, `satellitesUsed`,
/// `hdop`) on the wire: written by `ServerEncoder`, read back by the one
/// reader, and refused by name when a daemon sends them wrong.
@Suite struct FixQualityWireTests {
    static let location = Location(
        latitude: 44.068_843_333, longitude: -121.314_191_667, mode: .threeD, altitude: 1127.7,
        timestamp: FixTime(secondsSince1970: 1_594_507_065), device: "/dev/pts/1", fixStatus: .rtkFloat,
        satellitesUsed: 11, hdop: 0.84)

    static func encoded(_ location: Location) -> String {
        var writer = JSONWriter(capacity: 256)
        ServerEncoder.writeLocation(location, to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test func everyStatusRoundTrips() throws {
        for status in FixStatus.allCases {
            var location = Self.location
            location.fixStatus = status
            let text = Self.encoded(location)
            #expect(text.contains("\"fixStatus\":\"\(status.rawValue)\""), "\(text)")
            #expect(text.contains("\"satellitesUsed\":11,"), "an integer, not 11.0: \(text)")
            #expect(text.contains("\"hdop\":0.84"), "\(text)")
            #expect(try Location(wire: JSONValue.parse(Array(text.utf8)).get()) == location)
        }
    }

    @Test func absentMembersStayAbsent() throws {
        let bare = Location(latitude: 1, longitude: 2, mode: .twoD)
        let text = Self.encoded(bare)
        #expect(!text.contains("fixStatus") && !text.contains("satellitesUsed") && !text.contains("hdop"))
        #expect(try Location(wire: JSONValue.parse(Array(text.utf8)).get()) == bare)
    }

    @Test(arguments: [
        (#""fixStatus":2"#, "location.fixStatus"), (#""fixStatus":["dgps"]"#, "location.fixStatus"),
        (#""fixStatus":null"#, "location.fixStatus"), (#""satellitesUsed":-1"#, "location.satellitesUsed"),
        (#""satellitesUsed":3.5"#, "location.satellitesUsed"), (#""satellitesUsed":"11""#, "location.satellitesUsed"),
        (#""satellitesUsed":1e9"#, "location.satellitesUsed"), (#""hdop":"0.8""#, "location.hdop"),
        (#""hdop":true"#, "location.hdop"),
    ])
    func wrongMembersAreRefusedByName(member: String, field: String) throws {
        let text = #"{"latitude":1,"longitude":2,"mode":"3d","# + member + "}"
        let json = try JSONValue.parse(Array(text.utf8)).get()
        do throws(ProtocolError) {
            _ = try Location(wire: json)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.code == .badRequest)
            #expect(error.message.contains("\"\(field)\""), "\(error.message)")
        }
    }

    @Test func aStatusThisReaderDoesNotKnowIsUnknown() throws {
        let text = #"{"latitude":1,"longitude":2,"mode":"3d","fixStatus":"ppp","satellitesUsed":0}"#
        let location = try Location(wire: JSONValue.parse(Array(text.utf8)).get())
        #expect(location.fixStatus == nil)
        #expect(location.satellitesUsed == 0)
    }

    @Test func aStatusFromGpsdMapsBothWays() {
        #expect(FixStatus(gpsd: 0) == nil)
        #expect(FixStatus(gpsd: 10) == nil)
        #expect(FixStatus(gpsd: -1) == nil)
        for value in 1...9 {
            #expect(FixStatus(gpsd: value)?.gpsdValue == value)
        }
        #expect(FixStatus(gpsd: 3) == .rtkFixed && FixStatus(gpsd: 4) == .rtkFloat && FixStatus(gpsd: 9) == .pyCode)
    }
}

/// What the clients decode (AKLocationManager reads events through
/// `ServerEvent`): the fix quality survives a delegate event.
@Suite struct FixQualityEventTests {
    @Test func aDelegateEventCarriesTheFixQuality() throws {
        let line = ServerEncoder.event(.didUpdateLocation(FixQualityWireTests.location, afterTimeInterval: 1))
        guard case .didUpdateLocation(let location, _) = try ServerEvent.decode(line.dropLast()).get() else {
            Issue.record("not an update: \(String(decoding: line, as: UTF8.self))")
            return
        }
        #expect(location.fixStatus == .rtkFloat)
        #expect(location.satellitesUsed == 11)
        #expect(location.hdop == 0.84)
    }
}
