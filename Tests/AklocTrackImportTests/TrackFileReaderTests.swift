import AklocCore
import AklocProtocol
import Testing

@testable import AklocTrackImport

/// Every point of `text`, read `chunkSize` bytes at a time (small chunks
/// put every token across chunk edges).
private func points(_ text: String, chunkSize: Int = 7, maxRecordBytes: Int = 1 << 20) throws(TrackImportError)
    -> [ImportPoint]
{
    var reader = try TrackFileReader(bytes: Array(text.utf8), chunkSize: chunkSize, maxRecordBytes: maxRecordBytes)
    var all: [ImportPoint] = []
    while let (point, _) = try reader.next() { all.append(point) }
    return all
}

/// The error reading `text` gives: its code and the byte offset it names.
private func failure(_ text: String, maxRecordBytes: Int = 1 << 20) -> (TrackImportErrorCode, Int, String)? {
    do {
        _ = try points(text, maxRecordBytes: maxRecordBytes)
        return nil
    } catch {
        let message = error.message
        guard message.hasPrefix("at byte "), let colon = message.firstIndex(of: ":"),
            let offset = Int(message[message.index(message.startIndex, offsetBy: 8)..<colon])
        else { return (error.code, -1, message) }
        return (error.code, offset, message)
    }
}

private func time(_ text: String) -> FixTime { TrackTime.parse(text)! }

@Suite struct GPXReaderTests {
    static let gpx11 = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- written by hand -->
        <gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1" xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v2">
          <metadata><name>A &amp; B</name><time>2020-01-01T00:00:00Z</time></metadata>
          <wpt lat="1" lon="1"><time>2020-01-01T00:00:00Z</time></wpt>
          <trk><name><![CDATA[<day>]]></name>
            <trkseg>
              <trkpt lat="52.5163" lon="13.3777"><ele>34.5</ele><time>2020-05-01T10:00:00Z</time>
                <extensions><gpxtpx:TrackPointExtension><gpxtpx:speed>1.5</gpxtpx:speed><time>bogus</time></gpxtpx:TrackPointExtension></extensions>
              </trkpt>
              <trkpt lon='13.3778' lat='52.5164'><time> 2020-05-01T10:00:01.250Z </time></trkpt>
            </trkseg>
            <trkseg><trkpt lat="-33.5" lon="151.25"><time>2020-05-01T12:00:00+02:00</time><ele>-2</ele></trkpt></trkseg>
          </trk>
        </gpx>
        """

    @Test func gpx11PointsWithTimeElevationAndSegments() throws {
        let read = try points(Self.gpx11)
        #expect(
            read == [
                ImportPoint(
                    time: time("2020-05-01T10:00:00Z"), latitude: 52.5163, longitude: 13.3777, altitude: 34.5,
                    segment: 0),
                ImportPoint(time: time("2020-05-01T10:00:01.25Z"), latitude: 52.5164, longitude: 13.3778, segment: 0),
                ImportPoint(
                    time: time("2020-05-01T10:00:00Z"), latitude: -33.5, longitude: 151.25, altitude: -2, segment: 1),
            ])
        // The same whatever the chunking.
        #expect(try points(Self.gpx11, chunkSize: 1) == read)
        #expect(try points(Self.gpx11, chunkSize: 1 << 16) == read)
    }

    @Test func gpx10WithAPrefixAndAnEmptyRouteIsRead() throws {
        let text = """
            \u{FEFF}<gpx:gpx version="1.0" xmlns:gpx="http://www.topografix.com/GPX/1/0"><gpx:rte/>
            <gpx:trk><gpx:trkseg><gpx:trkpt lat="10" lon="20"><gpx:time>2004-01-02T03:04:05Z</gpx:time>
            <gpx:speed>3</gpx:speed></gpx:trkpt></gpx:trkseg></gpx:trk></gpx:gpx>
            """
        #expect(try points(text) == [ImportPoint(time: time("2004-01-02T03:04:05Z"), latitude: 10, longitude: 20)])
    }

    /// `<time>` is optional in GPX: a point without one is passed over and
    /// counted, the points around it are read.
    @Test func aPointWithoutATimeIsPassedOverAndCounted() throws {
        let text = """
            <gpx version="1.1"><trk><trkseg>
            <trkpt lat="1" lon="2"><ele>5</ele></trkpt>
            <trkpt lat="1.5" lon="2.5"><time>2020-01-01T00:00:00Z</time></trkpt>
            <trkpt lat="3" lon="4"/>
            </trkseg><trkseg><trkpt lat="5" lon="6"><time>2020-01-01T00:01:00Z</time></trkpt></trkseg></trk></gpx>
            """
        for chunkSize in [1, 7, 1 << 16] {
            var reader = try TrackFileReader(bytes: Array(text.utf8), chunkSize: chunkSize)
            var read: [ImportPoint] = []
            var offsets: [Int] = []
            while let (point, offset) = try reader.next() {
                read.append(point)
                offsets.append(offset)
            }
            #expect(
                read == [
                    ImportPoint(time: time("2020-01-01T00:00:00Z"), latitude: 1.5, longitude: 2.5, segment: 0),
                    ImportPoint(time: time("2020-01-01T00:01:00Z"), latitude: 5, longitude: 6, segment: 1),
                ])
            #expect(offsets == [77, 188], "each point's own offset")
            #expect(reader.untimed == 2)
        }
    }

    @Test(arguments: [
        // (file, code, offset of the problem, a word of the reason)
        (
            "<gpx version=\"1.1\"><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</time>",
            "malformed", 88, "ends inside"
        ),
        ("<gpx version=\"1.1\"><trk></trkseg></gpx>", "malformed", 24, "</trk> was expected"),
        ("<gpx version=\"2.0\"></gpx>", "unknownFormat", 0, "version"),
        ("<kml></kml>", "unknownFormat", 0, "root element is <kml>"),
        (
            "<gpx version=\"1.1\"><trk><trkseg><trkpt lat=\"91\" lon=\"2\"><time>2020-01-01T00:00:00Z</time></trkpt></trkseg></trk></gpx>",
            "badPoint", 32, "latitude 91"
        ),
        (
            "<gpx version=\"1.1\"><trk><trkseg><trkpt lat=\"1\" lon=\"east\"><time>2020-01-01T00:00:00Z</time></trkpt></trkseg></trk></gpx>",
            "badPoint", 32, "lon=\"east\""
        ),
        (
            "<gpx version=\"1.1\"><trk><trkseg><trkpt lat=\"1\" lon=\"200\"/></trkseg></trk></gpx>", "badPoint",
            32, "longitude 200"
        ),
        (
            "<gpx version=\"1.1\"><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><time> </time></trkpt></trkseg></trk></gpx>",
            "badPoint", 55, "ISO 8601"
        ),
        (
            "<gpx version=\"1.1\"><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><time>yesterday</time></trkpt></trkseg></trk></gpx>",
            "badPoint", 55, "yesterday"
        ),
        (
            "<gpx version=\"1.1\"><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><time>1969-12-31T23:59:59Z</time></trkpt></trkseg></trk></gpx>",
            "badPoint", 55, "ISO 8601"
        ),
        (
            "<gpx version=\"1.1\"><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><ele>high</ele><time>2020-01-01T00:00:00Z</time></trkpt></trkseg></trk></gpx>",
            "badPoint", 55, "<ele>high"
        ),
        ("<gpx version=\"1.1\"><trkpt lat=\"1\" lon=\"2\"/></gpx>", "malformed", 19, "outside a <trkseg>"),
        ("<!DOCTYPE gpx [<!ENTITY a \"b\">]><gpx version=\"1.1\"></gpx>", "malformed", 0, "DOCTYPE"),
        ("<gpx version=\"1.1\">&bogus;</gpx>", "malformed", 19, "&bogus;"),
        ("<gpx version=\"1.1\"></gpx><gpx version=\"1.1\"></gpx>", "malformed", 25, "second root"),
        ("<gpx version=\"1.1\" version=\"1.0\"></gpx>", "malformed", 19, "twice"),
        ("<gpx version=\"1.1\"><name>\u{FF}</name></gpx>", "malformed", 0, "garbage"),
        ("\u{0}\u{1}garbage", "unknownFormat", 0, "neither GPX"),
        ("", "malformed", 0, "empty"),
    ])
    func badGPXIsRefusedWithItsOffset(file: String, code: String, offset: Int, reason: String) throws {
        if reason == "garbage" {
            // Bytes that are not UTF-8 inside a name.
            var bytes = Array("<gpx version=\"1.1\"><na".utf8)
            bytes += [0xFF, 0xFE]
            bytes += Array("me/></gpx>".utf8)
            var reader = try TrackFileReader(bytes: bytes, chunkSize: 3)
            #expect(throws: TrackImportError.self) { while try reader.next() != nil {} }
            return
        }
        let result = try #require(failure(file))
        #expect(result.0.rawValue == code, "\(result.2)")
        #expect(result.1 == offset, "\(result.2)")
        #expect(result.2.contains(reason), "\(result.2)")
    }

    @Test func anOversizeTokenIsRefusedWithoutReadingItAll() {
        let long = "<gpx version=\"1.1\"><desc>" + String(repeating: "x", count: 70_000) + "</desc></gpx>"
        let result = failure(long)
        #expect(result?.0 == .tooLarge)
        #expect(result?.1 == 25)
    }
}

@Suite struct GoogleLocationReaderTests {
    @Test func recordsJSONBothTimestampFormsAndSkippedMembers() throws {
        let text = """
            {"locations": [
              {"latitudeE7": 521234567, "longitudeE7": 45000000, "accuracy": 20, "altitude": 3,
               "activity": [{"timestamp": "x", "activity": [{"type": "STILL", "confidence": 100}]}],
               "timestamp": "2022-01-12T17:18:24.19Z"},
              {"timestampMs": "1517755336082", "latitudeE7": -179883679, "longitudeE7": -796161282},
              {"timestampMs": 1517755336083, "latitudeE7": 0, "longitudeE7": 1800000000, "verticalAccuracy": 4},
              {"timestamp": "2014-01-01T00:00:00Z", "latitudeE7": 4294967295, "longitudeE7": 4293967296}
            ], "other": {"nested": [1, 2, {"a": null}]}}
            """
        #expect(
            try points(text) == [
                ImportPoint(
                    time: time("2022-01-12T17:18:24.19Z"), latitude: 52.1234567, longitude: 4.5, altitude: 3,
                    horizontalAccuracy: 20),
                ImportPoint(
                    time: FixTime(secondsSince1970: 1_517_755_336, nanoseconds: 82_000_000), latitude: -17.9883679,
                    longitude: -79.6161282),
                ImportPoint(
                    time: FixTime(secondsSince1970: 1_517_755_336, nanoseconds: 83_000_000), latitude: 0,
                    longitude: 180),
                // Negative E7 values printed unsigned, as some exports have them.
                ImportPoint(time: time("2014-01-01T00:00:00Z"), latitude: -0.000_000_1, longitude: -0.1),
            ])
    }

    @Test func timelineJSONPathsVisitsActivitiesAndRawSignals() throws {
        let text = """
            {"semanticSegments": [
              {"startTime": "2024-03-01T08:00:00.000+01:00", "endTime": "2024-03-01T09:00:00.000+01:00",
               "visit": {"hierarchyLevel": 0, "probability": 0.9, "topCandidate": {"placeId": "x", "semanticType": "HOME",
                 "placeLocation": {"latLng": "52.1°, 4.5°"}}}},
              {"startTime": "2024-03-01T08:00:00.000+01:00", "endTime": "2024-03-01T09:00:00.000+01:00",
               "visit": {"hierarchyLevel": 1, "topCandidate": {"placeLocation": {"latLng": "52.2°, 4.6°"}}}},
              {"startTime": "2024-03-01T09:00:00.000+01:00", "endTime": "2024-03-01T09:30:00.000+01:00",
               "activity": {"start": {"latLng": "52.1°, 4.5°"}, "end": {"latLng": "52.3°, 4.9°"}, "distanceMeters": 30000}},
              {"startTime": "2024-03-01T09:00:00.000+01:00", "endTime": "2024-03-01T11:00:00.000+01:00",
               "timelinePath": [{"point": "52.15°, 4.6°", "time": "2024-03-01T09:10:00.000+01:00"},
                                {"point": "-0.5°, -120.25°", "time": "2024-03-01T09:20:00.000+01:00"}]}
            ],
            "rawSignals": [
              {"position": {"LatLng": "52.3°, 4.9°", "accuracyMeters": 13, "altitudeMeters": 2.5, "source": "WIFI",
                            "timestamp": "2024-03-01T09:31:00.000+01:00", "speedMetersPerSecond": 0.0}},
              {"wifiScan": {"deliveryTime": "2024-03-01T09:31:00.000+01:00", "devicesRecords": []}},
              {"activityRecord": {"probableActivities": []}}
            ],
            "userLocationProfile": {"frequentPlaces": [{"placeId": "x", "placeLocation": "52.1°, 4.5°", "label": "HOME"}]}}
            """
        #expect(
            try points(text) == [
                ImportPoint(time: time("2024-03-01T07:00:00Z"), latitude: 52.1, longitude: 4.5),
                ImportPoint(time: time("2024-03-01T08:00:00Z"), latitude: 52.1, longitude: 4.5),
                ImportPoint(time: time("2024-03-01T08:00:00Z"), latitude: 52.1, longitude: 4.5),
                ImportPoint(time: time("2024-03-01T08:30:00Z"), latitude: 52.3, longitude: 4.9),
                ImportPoint(time: time("2024-03-01T08:10:00Z"), latitude: 52.15, longitude: 4.6),
                ImportPoint(time: time("2024-03-01T08:20:00Z"), latitude: -0.5, longitude: -120.25),
                ImportPoint(
                    time: time("2024-03-01T08:31:00Z"), latitude: 52.3, longitude: 4.9, altitude: 2.5,
                    horizontalAccuracy: 13),
            ])
    }

    @Test(arguments: [
        (
            #"{"locations":[{"latitudeE7":1,"longitudeE7":2,"timestamp":"2020-01-01T00:00:00Z"}"#, "malformed", 81,
            "ends inside"
        ),
        (
            #"{"locations":[{"latitudeE7":1,"longitudeE7":2,"timestamp":"2020-01-01T00:0"#, "malformed", 74,
            "ends inside"
        ),
        (
            #"{"locations":[{"latitudeE7":"1","longitudeE7":2,"timestamp":"2020-01-01T00:00:00Z"}]}"#, "badPoint", 14,
            "latitudeE7 must be a whole number, not a string"
        ),
        (
            #"{"locations":[{"latitudeE7":910000000,"longitudeE7":2,"timestamp":"2020-01-01T00:00:00Z"}]}"#, "badPoint",
            14, "latitude 91"
        ),
        (
            #"{"locations":[{"latitudeE7":1,"longitudeE7":-1810000000,"timestamp":"2020-01-01T00:00:00Z"}]}"#,
            "badPoint", 14, "longitude -181"
        ),
        (#"{"locations":[{"latitudeE7":1,"longitudeE7":2}]}"#, "badPoint", 14, "no \"timestamp\""),
        (#"{"locations":[{"latitudeE7":1,"longitudeE7":2,"timestampMs":"-5"}]}"#, "badPoint", 14, "timestampMs"),
        (
            #"{"locations":[{"latitudeE7":1,"longitudeE7":2,"timestamp":"10000-01-01T00:00:00Z"}]}"#, "badPoint", 14,
            "ISO 8601"
        ),
        (
            #"{"locations":[{"latitudeE7":1,"longitudeE7":2,"timestamp":"2020-01-01T00:00:00Z","accuracy":-3}]}"#,
            "badPoint", 14, "accuracy -3"
        ),
        (
            #"{"locations":[{"latitudeE7":1,"longitudeE7":2,"timestamp":"2020-01-01T00:00:00Z","accuracy":"big"}]}"#,
            "badPoint", 14, "accuracy must be a number"
        ),
        (#"{"locations":[{"latitudeE7":1,"longitudeE7":2,"timestamp":"2020-01-01T00:00:00Z"},]}"#, "malformed", 82, ""),
        (#"{"locations":[{"latitudeE7":1,,"longitudeE7":2}]}"#, "malformed", 30, ""),
        (#"{"locations":[42]}"#, "badPoint", 14, "must be an object, not a number"),
        (#"{"locations":[{"latitudeE7":1e400}]}"#, "malformed", 28, ""),
        (
            #"{"semanticSegments":[{"timelinePath":[{"point":"91°, 4°","time":"2024-01-01T00:00:00Z"}]}]}"#, "badPoint",
            21, "latitude 91"
        ),
        (
            #"{"semanticSegments":[{"timelinePath":[{"point":"north","time":"2024-01-01T00:00:00Z"}]}]}"#, "badPoint",
            21, "timelinePath[0].point"
        ),
        (#"{"semanticSegments":[{"timelinePath":{}}]}"#, "badPoint", 21, "must be an array"),
        (
            #"{"semanticSegments":[{"startTime":"2024-01-01T01:00:00Z","endTime":"2024-01-01T00:00:00Z","visit":{"topCandidate":{"placeLocation":{"latLng":"1°, 2°"}}}}]}"#,
            "badPoint", 21, "after its endTime"
        ),
        (
            #"{"semanticSegments":[{"startTime":"2024-01-01T01:00:00Z","endTime":"2024-01-01T02:00:00Z","visit":{"topCandidate":{}}}]}"#,
            "badPoint", 21, "placeLocation"
        ),
        (
            #"{"rawSignals":[{"position":{"LatLng":"1°, 2°","timestamp":5}}]}"#, "badPoint", 15,
            "timestamp must be an ISO 8601 time, not a number"
        ),
        (#"{"something":[1,2]}"#, "unknownFormat", 0, "not a Google location export"),
        (#"{"locations":[]} {"#, "malformed", 17, "after the end"),
        (#"[{"startTime":"2024-01-01T01:00:00Z"}]"#, "unknownFormat", 0, "iPhone"),
        ("{\"locations\":[{\"a\":\"\u{1}\"}]}", "malformed", 20, ""),
    ])
    func badJSONIsRefusedWithItsOffset(file: String, code: String, offset: Int, reason: String) throws {
        let result = try #require(failure(file))
        #expect(result.0.rawValue == code, "\(result.2)")
        #expect(result.1 == offset, "\(result.2)")
        #expect(result.2.contains(reason), "\(result.2)")
    }

    @Test func invalidUTF8InAStringIsRefused() throws {
        var bytes = Array(#"{"locations":[{"timestamp":""#.utf8)
        bytes += [0xC3, 0x28]
        bytes += Array(#""}]}"#.utf8)
        var reader = try TrackFileReader(bytes: bytes, chunkSize: 5)
        #expect(throws: TrackImportError.self) { while try reader.next() != nil {} }
    }

    @Test func anOversizeRecordIsRefusedAtItsStart() {
        let big =
            #"{"locations":[{"latitudeE7":1,"longitudeE7":2,"timestamp":"2020-01-01T00:00:00Z","pad":""#
            + String(repeating: "x", count: 5000) + #""}]}"#
        let result = failure(big, maxRecordBytes: 1000)
        #expect(result?.0 == .tooLarge)
        #expect(result?.1 == 14)
    }

    @Test func aStreamOfRecordsIsReadWithOneRecordAtATime() throws {
        // The stream hands out chunks made on demand: if the reader kept
        // them, the captured bytes would grow; it keeps one record.
        var produced = 0
        let record = Array(#"{"latitudeE7":521234567,"longitudeE7":45000000,"timestamp":"2022-01-12T17:18:24Z"},"#.utf8)
        var reader = try TrackFileReader(maxRecordBytes: 200) { () throws(TrackImportError) -> [UInt8]? in
            defer { produced += 1 }
            if produced == 0 { return Array(#"{"locations":["#.utf8) }
            if produced <= 20_000 { return record }
            if produced == 20_001 {
                return Array(#"{"latitudeE7":1,"longitudeE7":2,"timestamp":"2022-01-12T17:18:25Z"}]}"#.utf8)
            }
            return nil
        }
        var count = 0
        while try reader.next() != nil { count += 1 }
        #expect(count == 20_001)
    }
}
