import AklocCore
import AklocGeo
import AklocJSON
import AklocPosix
import AklocProtocol

/// The map's layers as GeoJSON (RFC 7946, longitude first): the track and
/// the saved places fetched from aklocd as the invoking user, and the
/// country outlines from data/borders.bin.
struct MapData: Sendable {
    var socketPath: String
    /// The track's start (`since` of the `track` op).
    var since: FixTime?
    /// URL of each saved place's image by place name (`--place-image`).
    var placeImages: [String: String]
    /// At most this many track points are drawn (the op's own cap).
    static let maxTrackPoints = 100_000

    /// `{"type":"FeatureCollection","features":[…]}`, with `akloc.error`
    /// when aklocd could not give the layer: the page says why and goes on.
    static func collection(_ features: [JSONValue], error: CLIError? = nil) -> JSONValue {
        var object: [String: JSONValue] = ["type": "FeatureCollection", "features": .array(features)]
        if let error { object["akloc"] = ["error": .string(error.message)] }
        return .object(object)
    }

    /// The point of `value`'s `latitude` and `longitude` (a location, a track
    /// point, a place's `coordinate`) when both are numbers on the globe. One
    /// without is left off the map: Leaflet throws on it, and the page with it.
    static func coordinate(of value: JSONValue?) -> Coordinate? {
        guard let latitude = value?["latitude"]?.doubleValue, let longitude = value?["longitude"]?.doubleValue
        else { return nil }
        let coordinate = Coordinate(latitude: latitude, longitude: longitude)
        return coordinate.isValid ? coordinate : nil
    }

    /// One LineString feature per segment of the track.
    func track() -> JSONValue {
        var segments: [(Int64, [JSONValue], first: JSONValue?, last: JSONValue?)] = []
        do {
            let connection = try DaemonConnection(path: socketPath, timeout: AklocCLI.replyTimeout)
            var query = TrackQuery(since: since, limit: 10_000)
            var total = 0
            while total < Self.maxTrackPoints {
                let result = try connection.call(.track(query))
                let points = result["points"]?.arrayValue ?? []
                for point in points {
                    guard let coordinate = Self.coordinate(of: point) else { continue }
                    let segment =
                        point["segment"].flatMap { value -> Int64? in
                            if case .int(let number) = value { return number }
                            return value.doubleValue.map { Int64($0) }
                        } ?? 0
                    if segments.last?.0 != segment { segments.append((segment, [], nil, nil)) }
                    segments[segments.count - 1].1.append([.double(coordinate.longitude), .double(coordinate.latitude)])
                    if segments[segments.count - 1].first == nil {
                        segments[segments.count - 1].first = point["timestamp"]
                    }
                    segments[segments.count - 1].last = point["timestamp"]
                    total += 1
                }
                guard let next = result["next"]?.stringValue, !points.isEmpty else { break }
                query.after = next
            }
        } catch {
            return Self.collection([], error: error)
        }
        let features: [JSONValue] = segments.map { segment, coordinates, first, last in
            [
                "type": "Feature",
                "geometry": ["type": "LineString", "coordinates": .array(coordinates)],
                "properties": ["segment": .int(segment), "start": first ?? .null, "end": last ?? .null],
            ]
        }
        return Self.collection(features)
    }

    /// The day view's layer (docs/map.md): the visits of `since`..<`until`
    /// as Point features and the trips between them as LineString features
    /// along the track they followed (straight from visit to visit when the
    /// track has fewer than two points there), with `akloc.since` and
    /// `akloc.until` as asked. Properties are the ops' own members.
    func day(since: FixTime, until: FixTime) -> JSONValue {
        var features: [JSONValue] = []
        var range: [String: JSONValue] = ["since": .int(since.secondsSince1970), "until": .int(until.secondsSince1970)]
        do {
            let connection = try DaemonConnection(path: socketPath, timeout: AklocCLI.replyTimeout)
            let query = TimelineQuery(since: since, until: until)
            let trips = try connection.call(.trips(query))["trips"]?.arrayValue ?? []
            for trip in trips {
                var line = try path(of: trip, connection)
                if line.count < 2 {
                    line = [trip["from"]?["coordinate"], trip["to"]?["coordinate"]].compactMap(Self.coordinate(of:))
                        .map { [.double($0.longitude), .double($0.latitude)] }
                }
                guard line.count >= 2, var properties = trip.objectValue else { continue }
                // The ends are the visits drawn beside it; only their times stay.
                properties["from"] = nil
                properties["to"] = nil
                features.append([
                    "type": "Feature", "geometry": ["type": "LineString", "coordinates": .array(line)],
                    "properties": ["kind": "trip", "trip": .object(properties)],
                ])
            }
            for visit in try connection.call(.visits(query))["visits"]?.arrayValue ?? [] {
                guard let centre = Self.coordinate(of: visit["coordinate"]), var properties = visit.objectValue
                else { continue }
                properties["coordinate"] = nil
                features.append([
                    "type": "Feature",
                    "geometry": [
                        "type": "Point", "coordinates": [.double(centre.longitude), .double(centre.latitude)],
                    ],
                    "properties": ["kind": "visit", "visit": .object(properties)],
                ])
            }
        } catch {
            range["error"] = .string(error.message)
        }
        return ["type": "FeatureCollection", "features": .array(features), "akloc": .object(range)]
    }

    /// The track points received between a trip's start and end, as GeoJSON positions.
    private func path(of trip: JSONValue, _ connection: DaemonConnection) throws(CLIError) -> [JSONValue] {
        guard let start = trip["start"]?.stringValue.flatMap(TrackTime.parse),
            let end = trip["end"]?.stringValue.flatMap(TrackTime.parse), start <= end
        else { return [] }
        var query = TrackQuery(since: start, until: end, limit: 10_000)
        var positions: [JSONValue] = []
        while positions.count < Self.maxTrackPoints {
            let result = try connection.call(.track(query))
            let points = result["points"]?.arrayValue ?? []
            for point in points {
                guard let coordinate = Self.coordinate(of: point) else { continue }
                positions.append([.double(coordinate.longitude), .double(coordinate.latitude)])
            }
            guard let next = result["next"]?.stringValue, !points.isEmpty else { break }
            query.after = next
        }
        return positions
    }

    /// One Point feature per saved place the user sees.
    func places() -> JSONValue {
        let places: [JSONValue]
        do {
            let connection = try DaemonConnection(path: socketPath, timeout: AklocCLI.replyTimeout)
            places = try connection.call(.places(.places))["places"]?.arrayValue ?? []
        } catch {
            return Self.collection([], error: error)
        }
        let features: [JSONValue] = places.compactMap { place in
            guard let name = place["name"]?.stringValue, let coordinate = Self.coordinate(of: place["coordinate"])
            else { return nil }
            var properties: [String: JSONValue] = ["name": .string(name)]
            for key in ["note", "radius", "createdAt", "shared"] { properties[key] = place[key] }
            if let image = placeImages[name] { properties["image"] = .string(image) }
            return [
                "type": "Feature",
                "geometry": [
                    "type": "Point", "coordinates": [.double(coordinate.longitude), .double(coordinate.latitude)],
                ],
                "properties": .object(properties),
            ]
        }
        return Self.collection(features)
    }

    /// Every country of data/borders.bin as a MultiPolygon of its rings
    /// (holes included: the page fills even-odd), simplified to `tolerance`
    /// degrees (about 2 km): outlines for a map, not for lookups.
    static func countries(bordersPath: String, tolerance: Double = 0.02) throws(CLIError) -> JSONValue {
        let file: MappedFile
        do {
            file = try MappedFile(path: bordersPath)
        } catch {
            throw .failure("cannot read \(bordersPath): \(error.message) (see --data-dir)")
        }
        // A Result, not a typed-throws closure: Swift 6.3's IRGen crashes on
        // the reabstraction thunk a rethrowing helper needs for the latter.
        let outcome: Result<[JSONValue], GeoDataReader.Error> = withExtendedLifetime(file) {
            Result { () throws(GeoDataReader.Error) -> [JSONValue] in
                let index = try PolygonIndex(file.bytes)
                var features: [JSONValue] = []
                for (region, code) in index.names.enumerated() {
                    var polygons: [JSONValue] = []
                    try index.forEachRing(ofRegion: region) { ring in
                        let thinned = thin(ring, tolerance: tolerance)
                        guard thinned.count >= 4 else { return }
                        polygons.append([.array(thinned.map { [.double($0.0), .double($0.1)] })])
                    }
                    guard !polygons.isEmpty else { continue }
                    features.append([
                        "type": "Feature", "properties": ["code": .string(code)],
                        "geometry": ["type": "MultiPolygon", "coordinates": .array(polygons)],
                    ])
                }
                return features
            }
        }
        let features: [JSONValue]
        switch outcome {
        case .success(let value): features = value
        case .failure(let error): throw .failure("\(bordersPath): \(error)")
        }
        return collection(features)
    }

    /// The base layers below the outlines (data/basemap.json, made by
    /// scripts/geodata/basemap.py): served as they are, after a check that
    /// the file is one well-formed JSON object of that format, so a wrong or
    /// damaged file is named at start rather than breaking the page.
    static func basemap(path: String) throws(CLIError) -> [UInt8] {
        let bytes: [UInt8]
        do {
            bytes = try FileReader.read(path, limit: maxBasemapBytes)
        } catch {
            throw .failure("cannot read \(path): \(error.message) (see --data-dir)")
        }
        switch JSONValue.validate(bytes, maxDepth: 8) {
        case .failure(let error):
            throw .failure("\(path): not a base map: \(error)")
        case .success(let outline):
            guard outline.kind == .object, outline.firstKey == "format", outline.firstString == basemapFormat else {
                throw .failure("\(path): not a base map: its first member is not \"format\": \"\(basemapFormat)\"")
            }
        }
        return bytes
    }

    static let basemapFormat = "akloc-basemap"
    /// The file is about 4 MiB; the limit keeps a wrong path (a disk image) from being read whole.
    static let maxBasemapBytes = 64 << 20

    /// A base map with no layers, saying why: the page notes it and draws the rest.
    static func emptyBasemap(error: CLIError) -> [UInt8] {
        JSONValue.object([
            "format": .string(basemapFormat), "version": 1, "akloc": ["error": .string(error.message)],
        ]).jsonBytes
    }

    /// Douglas–Peucker with `tolerance` degrees, rounded to 1e-3 degrees
    /// (about 100 m); the ring stays closed (first point = last point).
    private static func thin(
        _ ring: [(longitude: Double, latitude: Double)], tolerance: Double
    ) -> [(Double, Double)] {
        guard ring.count > 4 else { return ring.map { ($0.longitude, $0.latitude) } }
        var keep = [Bool](repeating: false, count: ring.count)
        keep[0] = true
        keep[ring.count - 1] = true
        // A closed ring's ends coincide: split it at its farthest point first.
        var far = 0
        var farDistance = -1.0
        for (index, point) in ring.enumerated() {
            let d = abs(point.longitude - ring[0].longitude) + abs(point.latitude - ring[0].latitude)
            if d > farDistance { (far, farDistance) = (index, d) }
        }
        keep[far] = true
        var stack = [(0, far), (far, ring.count - 1)]
        while let (first, last) = stack.popLast() {
            guard last > first + 1 else { continue }
            let (ax, ay) = ring[first]
            let (bx, by) = ring[last]
            let dx = bx - ax
            let dy = by - ay
            let length = (dx * dx + dy * dy).squareRoot()
            var worst = first
            var worstDistance = 0.0
            for index in (first + 1)..<last {
                let (px, py) = ring[index]
                let d =
                    length == 0
                    ? ((px - ax) * (px - ax) + (py - ay) * (py - ay)).squareRoot()
                    : abs(dy * px - dx * py + bx * ay - by * ax) / length
                if d > worstDistance { (worst, worstDistance) = (index, d) }
            }
            guard worstDistance > tolerance else { continue }
            keep[worst] = true
            stack.append((first, worst))
            stack.append((worst, last))
        }
        func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
        return ring.indices.filter { keep[$0] }.map { (rounded(ring[$0].longitude), rounded(ring[$0].latitude)) }
    }
}
