import AklocCore
import AklocJSON
import AklocProtocol

/// Google's location exports, streamed a record at a time:
///
/// - Takeout's `Records.json`: `{"locations":[{"latitudeE7":…,
///   "longitudeE7":…,"accuracy":…,"altitude":…,"timestamp":"…"}]}`
///   (before 2022 `"timestampMs":"…"`, milliseconds in a string);
/// - the phone's own Timeline export (`Timeline.json`, since 2024):
///   `semanticSegments`, each with a `timelinePath` of
///   `{"point":"52.1°, 4.5°","time":"…"}`, or a `visit` (its
///   `topCandidate.placeLocation.latLng`, at its `startTime` and again at its
///   `endTime`, so the stay is in the track) or an `activity` (its `start`
///   and `end` `latLng` at those times); and `rawSignals` whose `position`
///   has `LatLng`, `timestamp`, `accuracyMeters` and `altitudeMeters`.
///
/// Other members (`userLocationProfile`, activity and Wi-Fi signals) are
/// read, checked as JSON, and passed over.
struct GoogleLocationReader {
    private var records: JSONRecordStream
    private var pending: [ImportPoint] = []
    private var pendingOffset = 0
    private var sawLocations = false

    init(stream: ByteStream, maxRecordBytes: Int) {
        records = JSONRecordStream(stream: stream, maxRecordBytes: maxRecordBytes)
    }

    mutating func next() throws(TrackImportError) -> (point: ImportPoint, offset: Int)? {
        while pending.isEmpty {
            guard let (item, offset) = try records.next() else {
                guard sawLocations else {
                    throw .at(
                        0, .unknownFormat,
                        "no \"locations\", \"semanticSegments\" or \"rawSignals\": not a Google location export "
                            + "(Takeout's Semantic Location History files are not read; its Records.json is)")
                }
                return nil
            }
            guard case .element(let key, let index, let value) = item else { continue }
            let field = "\(key)[\(index)]"
            var points: [ImportPoint]
            switch key {
            case "locations": points = [try Self.record(value, field: field, at: offset)]
            case "semanticSegments": points = try Self.segment(value, field: field, at: offset)
            case "rawSignals": points = try Self.signal(value, field: field, at: offset)
            default: continue
            }
            sawLocations = true
            for point in points {
                if let problem = point.problem() { throw .at(offset, .badPoint, "\(field): \(problem)") }
            }
            points.reverse()
            pending = points
            pendingOffset = offset
        }
        return (pending.removeLast(), pendingOffset)
    }

    /// One `Records.json` location.
    static func record(_ value: JSONValue, field: String, at offset: Int) throws(TrackImportError) -> ImportPoint {
        let members = try object(value, field, at: offset)
        func e7(_ name: String) throws(TrackImportError) -> Double {
            guard let member = members[name] else { throw .at(offset, .badPoint, "\(field) has no \"\(name)\"") }
            guard case .int(var number) = member else {
                throw .at(offset, .badPoint, "\(field).\(name) must be a whole number, not \(member.typeName)")
            }
            // Some exports print a negative E7 as its unsigned 32-bit pattern
            // (-1 as 4294967295): read those as the signed value they are.
            if (1 << 31..<1 << 32).contains(number) { number -= 1 << 32 }
            return Double(number) / 1e7
        }
        let time: FixTime
        if let text = members["timestamp"] {
            time = try isoTime(text, "\(field).timestamp", at: offset)
        } else if let millis = members["timestampMs"] {
            let number: Int64?
            switch millis {
            case .string(let text): number = text.utf8.count <= 15 ? Int64(text) : nil
            case .int(let value): number = value
            default: number = nil
            }
            guard let number, number >= 0, number / 1000 <= TrackTime.maxSeconds else {
                throw .at(
                    offset, .badPoint,
                    "\(field).timestampMs must be milliseconds since 1970, not \(millis.jsonString.prefix(40))")
            }
            time = FixTime(secondsSince1970: number / 1000, nanoseconds: Int32(number % 1000) * 1_000_000)
        } else {
            throw .at(offset, .badPoint, "\(field) has no \"timestamp\" (or \"timestampMs\")")
        }
        return ImportPoint(
            time: time, latitude: try e7("latitudeE7"), longitude: try e7("longitudeE7"),
            altitude: try number(members["altitude"], "\(field).altitude", at: offset),
            horizontalAccuracy: try number(members["accuracy"], "\(field).accuracy", at: offset))
    }

    /// One `Timeline.json` semantic segment: its path, visit or activity.
    static func segment(_ value: JSONValue, field: String, at offset: Int) throws(TrackImportError) -> [ImportPoint] {
        let members = try object(value, field, at: offset)
        var points: [ImportPoint] = []
        if let path = members["timelinePath"] {
            guard case .array(let entries) = path else {
                throw .at(offset, .badPoint, "\(field).timelinePath must be an array, not \(path.typeName)")
            }
            for (index, entry) in entries.enumerated() {
                let name = "\(field).timelinePath[\(index)]"
                let point = try object(entry, name, at: offset)
                let (latitude, longitude) = try latLng(point["point"], "\(name).point", at: offset)
                let time = try isoTime(point["time"], "\(name).time", at: offset)
                points.append(ImportPoint(time: time, latitude: latitude, longitude: longitude))
            }
        }
        var ends: [(JSONValue?, String)] = []
        if let visit = members["visit"] {
            let visitMembers = try object(visit, "\(field).visit", at: offset)
            // Level 1 is a place around the visited one, at the same times.
            if (visitMembers["hierarchyLevel"]?.doubleValue ?? 0) == 0 {
                let candidate = try object(visitMembers["topCandidate"], "\(field).visit.topCandidate", at: offset)
                let location = try object(
                    candidate["placeLocation"], "\(field).visit.topCandidate.placeLocation", at: offset)
                let place = location["latLng"]
                ends = [(place, "\(field).visit.topCandidate.placeLocation.latLng"), (place, "")]
            }
        } else if let activity = members["activity"] {
            let activityMembers = try object(activity, "\(field).activity", at: offset)
            let start = try object(activityMembers["start"], "\(field).activity.start", at: offset)
            let end = try object(activityMembers["end"], "\(field).activity.end", at: offset)
            ends = [
                (start["latLng"], "\(field).activity.start.latLng"), (end["latLng"], "\(field).activity.end.latLng"),
            ]
        }
        if !ends.isEmpty {
            let start = try isoTime(members["startTime"], "\(field).startTime", at: offset)
            let end = try isoTime(members["endTime"], "\(field).endTime", at: offset)
            guard start <= end else { throw .at(offset, .badPoint, "\(field).startTime is after its endTime") }
            let first = try latLng(ends[0].0, ends[0].1, at: offset)
            let last = ends[1].1.isEmpty ? first : try latLng(ends[1].0, ends[1].1, at: offset)
            points.append(ImportPoint(time: start, latitude: first.0, longitude: first.1))
            if end != start { points.append(ImportPoint(time: end, latitude: last.0, longitude: last.1)) }
        }
        return points
    }

    /// One `Timeline.json` raw signal: a `position`, or nothing (Wi-Fi scans, activity records).
    static func signal(_ value: JSONValue, field: String, at offset: Int) throws(TrackImportError) -> [ImportPoint] {
        let members = try object(value, field, at: offset)
        guard let position = members["position"] else { return [] }
        let name = "\(field).position"
        let fields = try object(position, name, at: offset)
        let (latitude, longitude) = try latLng(fields["LatLng"], "\(name).LatLng", at: offset)
        return [
            ImportPoint(
                time: try isoTime(fields["timestamp"], "\(name).timestamp", at: offset), latitude: latitude,
                longitude: longitude,
                altitude: try number(fields["altitudeMeters"], "\(name).altitudeMeters", at: offset),
                horizontalAccuracy: try number(fields["accuracyMeters"], "\(name).accuracyMeters", at: offset))
        ]
    }

    private static func object(_ value: JSONValue?, _ field: String, at offset: Int) throws(TrackImportError)
        -> [String: JSONValue]
    {
        guard let value else { throw .at(offset, .badPoint, "no \"\(field)\"") }
        guard case .object(let members) = value else {
            throw .at(offset, .badPoint, "\(field) must be an object, not \(value.typeName)")
        }
        return members
    }

    private static func number(_ value: JSONValue?, _ field: String, at offset: Int) throws(TrackImportError)
        -> Double?
    {
        guard let value, value != .null else { return nil }
        guard let number = value.doubleValue else {
            throw .at(offset, .badPoint, "\(field) must be a number, not \(value.typeName)")
        }
        return number
    }

    private static func isoTime(_ value: JSONValue?, _ field: String, at offset: Int) throws(TrackImportError)
        -> FixTime
    {
        guard let value else { throw .at(offset, .badPoint, "no \"\(field)\"") }
        guard case .string(let text) = value else {
            throw .at(offset, .badPoint, "\(field) must be an ISO 8601 time, not \(value.typeName)")
        }
        guard let time = TrackTime.parse(text) else {
            throw .at(offset, .badPoint, "\(field) \"\(text.prefix(40))\" is not an ISO 8601 time")
        }
        return time
    }

    /// `"52.1°, 4.5°"` (and `"geo:52.1,4.5"`, the iPhone export's form).
    static func latLng(_ value: JSONValue?, _ field: String, at offset: Int) throws(TrackImportError)
        -> (Double, Double)
    {
        guard let value else { throw .at(offset, .badPoint, "no \"\(field)\"") }
        guard case .string(var text) = value else {
            throw .at(offset, .badPoint, "\(field) must be a \"latitude°, longitude°\" string, not \(value.typeName)")
        }
        if text.hasPrefix("geo:") { text.removeFirst(4) }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map {
            String($0.filter { $0 != "°" }).trimmingWhitespace
        }
        guard parts.count == 2, let latitude = Double(parts[0]), let longitude = Double(parts[1]),
            latitude.isFinite, longitude.isFinite
        else {
            throw .at(offset, .badPoint, "\(field) \"\(text.prefix(60))\" is not \"latitude°, longitude°\"")
        }
        return (latitude, longitude)
    }
}
