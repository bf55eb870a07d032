import AklocCore
import AklocJSON
import AklocProtocol

/// `akloc timeline --gpx` and `--geojson`: each visit a waypoint (a Point
/// feature) at its centre, each trip a track segment (a LineString feature)
/// of its recorded points, with what the daemon said of them.
struct TimelineExporter {
    var timeline: TimelineFetch
    /// Each trip's recorded points, in the order of `timeline.trips`.
    var points: [[Location]]

    func gpx() -> [UInt8] {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="akloc \(AklocVersion.string)" xmlns="http://www.topografix.com/GPX/1/1">

            """
        for visit in timeline.visits {
            let latitude = visit.json["coordinate"]?["latitude"]?.doubleValue ?? 0
            let longitude = visit.json["coordinate"]?["longitude"]?.doubleValue ?? 0
            text += "<wpt lat=\"\(Self.number(latitude))\" lon=\"\(Self.number(longitude))\">"
            text += "<time>\(visit.start.iso8601)</time><name>\(Self.escaped(visit.placeName))</name>"
            let departure = visit.end.map { "–\($0.iso8601)" } ?? "–"
            text += "<desc>\(visit.start.iso8601)\(departure)</desc><type>visit</type></wpt>\n"
        }
        text += "<trk><name>akloc timeline</name>\n"
        for locations in points where !locations.isEmpty {
            text += "<trkseg>\n"
            for location in locations {
                text += "<trkpt lat=\"\(Self.number(location.latitude))\" lon=\"\(Self.number(location.longitude))\">"
                if let altitude = location.altitude { text += "<ele>\(Self.number(altitude))</ele>" }
                if let time = location.receivedAt ?? location.timestamp { text += "<time>\(time.iso8601)</time>" }
                text += "</trkpt>\n"
            }
            text += "</trkseg>\n"
        }
        text += "</trk>\n</gpx>\n"
        return Array(text.utf8)
    }

    func geojson() -> [UInt8] {
        var features: [JSONValue] = []
        for visit in timeline.visits {
            let latitude = visit.json["coordinate"]?["latitude"]?.doubleValue ?? 0
            let longitude = visit.json["coordinate"]?["longitude"]?.doubleValue ?? 0
            var properties = visit.json.objectValue ?? [:]
            properties["kind"] = "visit"
            properties["name"] = .string(visit.placeName)
            properties["coordinate"] = nil
            features.append([
                "type": "Feature",
                "geometry": ["type": "Point", "coordinates": [.double(longitude), .double(latitude)]],
                "properties": .object(properties),
            ])
        }
        for (trip, locations) in zip(timeline.trips, points) {
            var coordinates = locations.map { JSONValue.array([.double($0.longitude), .double($0.latitude)]) }
            if coordinates.count < 2 {
                // Too few points recorded for a line: the centres it went between.
                coordinates = [trip.json["from"], trip.json["to"]].compactMap { visit in
                    guard let latitude = visit?["coordinate"]?["latitude"]?.doubleValue,
                        let longitude = visit?["coordinate"]?["longitude"]?.doubleValue
                    else { return nil }
                    return [.double(longitude), .double(latitude)]
                }
                guard coordinates.count == 2 else { continue }
            }
            var properties = trip.json.objectValue ?? [:]
            properties["kind"] = "trip"
            // The visits are features of their own: their arrivals say which.
            properties["from"] = trip.json["from"]?["arrival"] ?? .null
            properties["to"] = trip.json["to"]?["arrival"] ?? .null
            features.append([
                "type": "Feature", "geometry": ["type": "LineString", "coordinates": .array(coordinates)],
                "properties": .object(properties),
            ])
        }
        let collection: JSONValue = ["type": "FeatureCollection", "features": .array(features)]
        return Array((collection.jsonString + "\n").utf8)
    }

    private static func number(_ value: Double) -> String {
        var writer = JSONWriter(capacity: 24)
        writer.number(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    private static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }
}
