import AklocCore
import Testing

@testable import AklocMQTT

/// The command parser against the messages OwnTracks' own documentation
/// (the booklet's `_type=cmd` list), the Android app's parser tests and
/// Home Assistant users' `mqtt.publish` send, verbatim, and against what a
/// broker may send that is none of them.
@Suite struct OwnTracksCommandTests {
    let all = Set(OwnTracksCommand.Action.allCases)

    func parse(_ text: String, enabled: Set<OwnTracksCommand.Action>? = nil)
        -> Result<OwnTracksCommand, OwnTracksCommandError>
    {
        OwnTracksCommand.parse(Array(text.utf8), enabled: enabled ?? all)
    }

    func refusal(_ text: String, enabled: Set<OwnTracksCommand.Action>? = nil) -> OwnTracksCommandErrorCode? {
        if case .failure(let error) = parse(text, enabled: enabled) { return error.code }
        return nil
    }

    @Test(arguments: [
        // The booklet and Home Assistant's mqtt.publish examples.
        (#"{"_type":"cmd","action":"reportLocation"}"#, OwnTracksCommand.reportLocation),
        // The Android app's parser test, with its space.
        (#"{"_type":"cmd", "action":"reportLocation"}"#, .reportLocation),
        (#"{"_type":"cmd","action":"dump"}"#, .dump),
        (#"{"_type":"cmd", "action":"dump"}"#, .dump),
        (#"{"_type":"cmd","action":"waypoints"}"#, .waypoints),
    ])
    func theAppsCommandsParse(text: String, command: OwnTracksCommand) throws {
        #expect(try parse(text).get() == command)
    }

    @Test func setWaypointsInEachShapeTheAppsTake() throws {
        let list =
            #"[{"_type":"waypoint","desc":"Home","lat":52.5,"lon":13.4,"rad":150,"tst":1385997757},"#
            + #"{"_type":"waypoint","desc":"Paris is lovely","lat":48.85833,"lon":2.29513}]"#
        let expected = [
            OwnTracksPayload.Waypoint(
                name: "Home", latitude: 52.5, longitude: 13.4, radius: 150,
                createdAt: FixTime(secondsSince1970: 1_385_997_757)),
            OwnTracksPayload.Waypoint(
                name: "Paris is lovely", latitude: 48.85833, longitude: 2.29513, radius: 100,
                createdAt: FixTime(secondsSince1970: 0)),
        ]
        for text in [
            #"{"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":"# + list + "}}",
            #"{"_type":"cmd","action":"setWaypoints","payload":{"_type":"waypoints","waypoints":"# + list + "}}",
            #"{"_type":"cmd","action":"setWaypoints","waypoints":"# + list + "}",
        ] {
            #expect(try parse(text).get() == .setWaypoints(expected), "\(text)")
        }
    }

    @Test(arguments: [
        ("", OwnTracksCommandErrorCode.malformed),
        (#"{"_type":"cmd","action":"dump""#, .malformed),
        ("[1,2]", .malformed),
        ("\u{FF}", .malformed),
        (String(repeating: "[", count: 20_000), .malformed),
        (#"{"_type":"location","lat":1,"lon":2,"tst":1}"#, .notACommand),
        (#"{"_type":"encrypted","data":"abc"}"#, .notACommand),
        (#"{"action":"dump"}"#, .notACommand),
        (#"{"_type":"cmd"}"#, .unknownAction),
        (#"{"_type":"cmd","action":7}"#, .unknownAction),
        (#"{"_type":"cmd","action":"reportSteps"}"#, .unknownAction),
        (#"{"_type":"cmd","action":"setConfiguration","configuration":{"_type":"configuration"}}"#, .unknownAction),
        (#"{"_type":"cmd","action":"action","content":"Backend maintenance"}"#, .unknownAction),
        (#"{"_type":"cmd","action":"setWaypoints"}"#, .badWaypoints),
        (#"{"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints"}}"#, .badWaypoints),
        (#"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"x","lat":"52.5","lon":13}]}"#, .badWaypoints),
        (#"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"x","lat":95,"lon":13}]}"#, .badWaypoints),
        (#"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"","lat":5,"lon":13}]}"#, .badWaypoints),
        (
            #"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"x","lat":5,"lon":13,"rad":0}]}"#,
            .badWaypoints
        ),
        (
            #"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"x","lat":5,"lon":1,"tst":-1}]}"#,
            .badWaypoints
        ),
        (
            #"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"x","lat":5,"lon":1},{"desc":"x","lat":6,"lon":1}]}"#,
            .badWaypoints
        ),
    ])
    func eachRefusalHasItsCode(text: String, code: OwnTracksCommandErrorCode) {
        #expect(refusal(text) == code, "\(text.prefix(80))")
    }

    @Test func aCommandNotNamedInTheConfigIsRefusedByName() throws {
        let result = parse(#"{"_type":"cmd","action":"setWaypoints","waypoints":[]}"#, enabled: [.reportLocation])
        guard case .failure(let error) = result else { Issue.record("accepted: \(result)"); return }
        #expect(error.code == .notEnabled)
        #expect(error.description == "setWaypoints is not in [mqtt] commands [notEnabled]")
        #expect(refusal(#"{"_type":"cmd","action":"dump"}"#, enabled: []) == .notEnabled)
    }

    @Test func anOversizedCommandIsRefusedBeforeItIsRead() {
        var text = #"{"_type":"cmd","action":"dump","pad":""#
        text += String(repeating: "x", count: OwnTracksCommand.maxPayloadBytes) + #""}"#
        #expect(refusal(text) == .tooLarge)
        let tooMany = (0...1000).map { #"{"desc":"p\#($0)","lat":1,"lon":1}"# }.joined(separator: ",")
        #expect(refusal(#"{"_type":"cmd","action":"setWaypoints","waypoints":["# + tooMany + "]}") == .badWaypoints)
    }

    @Test func aBrokersTextIsShownShortAndWithoutControlCharacters() {
        #expect(OwnTracksCommand.shown("a\nb\u{1B}") == "a?b?")
        #expect(OwnTracksCommand.shown(String(repeating: "z", count: 100)) == String(repeating: "z", count: 64) + "…")
    }

    @Test func refusalsAreLoggedOncePerKindAndMinute() {
        var log = CommandRefusalLog()
        let malformed = OwnTracksCommandError(.malformed, "not JSON")
        let unknown = OwnTracksCommandError(.unknownAction, "reportSteps")
        let start = Instant.seconds(100)
        #expect(log.refused(malformed, at: start) != nil)
        #expect(log.refused(malformed, at: start.advanced(bySeconds: 1)) == nil)
        #expect(log.refused(unknown, at: start.advanced(bySeconds: 2)) != nil)
        #expect(log.refused(malformed, at: start.advanced(bySeconds: 59)) == nil)
        let line = log.refused(malformed, at: start.advanced(bySeconds: 60))
        #expect(line?.contains("(2 more of this kind ignored since the last line)") == true)
        #expect(log.total == 5)
    }

    @Test func theDumpNamesTheSettingsButNoSecret() throws {
        var settings = MQTTSettings()
        settings.hosts = [HostPort(host: "broker.example.org"), HostPort(host: "b2.example.org", port: 1884)]
        settings.username = "van7"
        settings.password = "s3cret-pw"
        settings.tls = true
        settings.certFile = "/etc/akloc/client.pem"
        settings.keyFile = "/etc/akloc/client-key.pem"
        settings.commands = [.dump]
        let identity = settings.identity(hostUser: "akloc", hostName: "van7")
        let dump = String(
            decoding: OwnTracksPayload.configuration(settings, identity: identity, commands: [.dump]), as: UTF8.self)
        #expect(dump.hasPrefix(#"{"_type":"configuration","auth":true,"clientId":"akloc-van7","cmd":true,"#))
        #expect(dump.contains(#""host":"broker.example.org""#) && dump.contains(#""port":8883"#))
        #expect(dump.contains(#""hosts":["broker.example.org","b2.example.org:1884"]"#))
        #expect(dump.contains(#""pubTopicBase":"owntracks/akloc/van7""#) && dump.contains(#""username":"van7""#))
        #expect(!dump.contains("s3cret") && !dump.contains("client-key") && !dump.contains("/etc/akloc"))
    }
}
