import AklocCore
import Foundation
import Testing

@testable import AklocMQTT

private func object(_ bytes: [UInt8]) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
}

@Suite struct OwnTracksPayloadTests {
    let fixTime = FixTime(secondsSince1970: 1_764_517_000, nanoseconds: 750_000_000)
    let received = FixTime(secondsSince1970: 1_764_517_002)
    let now = FixTime(secondsSince1970: 1_764_517_009)

    @Test func aFullFixHasEveryOwnTracksField() throws {
        let location = Location(
            latitude: 52.520_008, longitude: 13.404_954, mode: .threeD, altitude: 34.6, horizontalAccuracy: 4.4,
            verticalAccuracy: 7.5, speed: 13.9, course: 271.4, timestamp: fixTime, receivedAt: received)
        let bytes = OwnTracksPayload.location(location, tid: "vn", trigger: .timer, now: now)
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"_type":"location","acc":4,"alt":35,"cog":271,"lat":52.520008,"lon":13.404954,"m":1,"t":"t","tid":"vn","tst":1764517000,"vac":8,"vel":50}"#
        )
        let json = try object(bytes)
        #expect(json["_type"] as? String == "location")
        #expect(json["vel"] as? Int == 50)  // 13.9 m/s = 50.04 km/h
    }

    @Test func unknownFieldsAreOmittedNotNull() throws {
        let location = Location(latitude: -33.9, longitude: 18.4, mode: .twoD, timestamp: fixTime)
        let json = try object(OwnTracksPayload.location(location, tid: "ab", trigger: .timer, now: now))
        #expect(Set(json.keys) == ["_type", "lat", "lon", "m", "t", "tid", "tst"])
    }

    @Test func tstFallsBackToReceiptThenNow() throws {
        var location = Location(latitude: 1, longitude: 2, receivedAt: received)
        var json = try object(OwnTracksPayload.location(location, tid: "ab", trigger: .timer, now: now))
        #expect(json["tst"] as? Int == 1_764_517_002)
        location.receivedAt = nil
        json = try object(OwnTracksPayload.location(location, tid: "ab", trigger: .timer, now: now))
        #expect(json["tst"] as? Int == 1_764_517_009)
    }

    @Test func requestedLocationsSayU() throws {
        let location = Location(latitude: 1, longitude: 2, timestamp: fixTime)
        let json = try object(OwnTracksPayload.location(location, tid: "ab", trigger: .requested, now: now))
        #expect(json["t"] as? String == "u")
    }

    @Test func courseNearlyNorthIsZero() throws {
        let location = Location(latitude: 1, longitude: 2, course: 359.7, timestamp: fixTime)
        let json = try object(OwnTracksPayload.location(location, tid: "ab", trigger: .timer, now: now))
        #expect(json["cog"] as? Int == 0)
    }

    @Test func tidIsEscaped() throws {
        let location = Location(latitude: 1, longitude: 2, timestamp: fixTime)
        let json = try object(OwnTracksPayload.location(location, tid: "a\"\\", trigger: .timer, now: now))
        #expect(json["tid"] as? String == "a\"\\")
    }

    @Test func status() throws {
        let status = try object(OwnTracksPayload.status(online: true, tid: "vn", version: "1.0", at: now))
        #expect(status["_type"] as? String == "akloc-status")
        #expect(status["online"] as? Bool == true)
        #expect(status["tid"] as? String == "vn")
        let offline = try object(OwnTracksPayload.status(online: false, tid: "vn", version: "1.0", at: now))
        #expect(offline["online"] as? Bool == false)
    }
}

@Suite struct MQTTSettingsTests {
    @Test func identityDefaultsFromHost() {
        let identity = MQTTSettings().identity(hostUser: "akloc", hostName: "van-07")
        #expect(identity.topic == "owntracks/akloc/van-07")
        #expect(identity.tid == "07")
        #expect(identity.clientID == "akloc-van-07")
    }

    @Test func configuredNamesWin() {
        var settings = MQTTSettings()
        settings.user = "alice"
        settings.device = "boat"
        settings.tid = "bt"
        var identity = settings.identity(hostUser: "akloc", hostName: "h")
        #expect(identity.topic == "owntracks/alice/boat")
        #expect(identity.tid == "bt")
        settings.topic = "fleet/boat"
        identity = settings.identity(hostUser: "akloc", hostName: "h")
        #expect(identity.topic == "fleet/boat")
    }

    @Test func hostNamesBecomeOneTopicLevel() {
        let identity = MQTTSettings().identity(hostUser: "", hostName: "a/b+c#")
        #expect(identity.topic == "owntracks/akloc/a-b-c-")
    }

    @Test func portDependsOnTLS() {
        var settings = MQTTSettings()
        #expect(settings.effectivePort == 1883)
        settings.tls = true
        #expect(settings.effectivePort == 8883)
        settings.port = 18883
        #expect(settings.effectivePort == 18883)
    }

    @Test func topicsWithWildcardsAreInvalid() {
        #expect(MQTTSettings.isValidTopic("owntracks/a/b"))
        #expect(!MQTTSettings.isValidTopic("owntracks/+/b"))
        #expect(!MQTTSettings.isValidTopic("owntracks/#"))
        #expect(!MQTTSettings.isValidTopic(""))
    }
}
