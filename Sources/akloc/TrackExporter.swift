import AklocCore
import AklocJSON
import AklocPosix
import AklocProtocol
import Glibc

/// Writes track pages as they arrive, in one of the export formats, so an
/// export of millions of points never holds them all (GeoJSON holds one
/// segment: its coordinates and their times are separate arrays).
///
/// - GPX 1.1: one `<trk>`, one `<trkseg>` per segment; per point `<ele>`
///   (altitude above mean sea level), `<time>`, `<fix>` (`dgps` and `pps`
///   from the fix status, else `2d`/`3d`), `<sat>` and `<hdop>` when known, and in
///   `<extensions>` Garmin's TrackPointExtension v2 `speed` (m/s) and
///   `course` (degrees) and akloc's `horizontalAccuracy`/`verticalAccuracy` (m).
/// - GeoJSON (RFC 7946): a FeatureCollection, one LineString Feature per
///   segment (a segment of one point is a Point), positions
///   `[longitude, latitude, altitude]`, and per-position arrays in
///   `properties.coordinateProperties` (`times`, `speeds`, `courses`,
///   `horizontalAccuracies`, `verticalAccuracies`; null where unknown).
/// - CSV: a header line, then one line per point.
/// - NDJSON: each point as the `track` op returns it.
struct TrackExporter {
    enum Sink {
        case standardOutput
        case descriptor(Int32, path: String)

        static func file(_ path: String) throws(CLIError) -> Sink {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw .failure("cannot write \(path): \(String(cString: strerror(errno)))") }
            return .descriptor(fd, path: path)
        }
    }

    let format: TrackCommand.Format
    let sink: Sink
    private var buffer: [UInt8] = []
    private(set) var bytesWritten = 0
    private var started = false
    private var segment: UInt64?
    private var features = 0
    /// The open GeoJSON segment.
    private var pending: [Location] = []

    init(format: TrackCommand.Format, sink: Sink) {
        self.format = format
        self.sink = sink
        buffer.reserveCapacity(1 << 20)
    }

    mutating func write(_ points: [TrackPoint]) throws(CLIError) {
        if !started {
            started = true
            head()
        }
        for point in points {
            switch format {
            case .gpx: gpx(point)
            case .geojson:
                if point.segment != segment, !pending.isEmpty { geojsonFeature() }
                segment = point.segment
                pending.append(point.location)
            case .csv: csv(point)
            case .ndjson:
                var writer = JSONWriter(capacity: 256)
                TrackPage.write(point, to: &writer)
                buffer += writer.bytes
                buffer.append(0x0A)
            }
            if buffer.count >= 1 << 20 { try flush() }
        }
    }

    mutating func finish() throws(CLIError) {
        if !started { head() }
        switch format {
        case .gpx:
            if segment != nil { text("</trkseg>\n") }
            text("</trk>\n</gpx>\n")
        case .geojson:
            if !pending.isEmpty { geojsonFeature() }
            text("\n]}\n")
        case .csv, .ndjson:
            break
        }
        try flush()
        if case .descriptor(let fd, let path) = sink {
            defer { Syscall.close(fd) }
            do {
                try FileSystem.sync(fd)
            } catch {
                throw .failure("writing \(path): \(error.message)")
            }
        }
    }

    private mutating func head() {
        switch format {
        case .gpx:
            text(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <gpx version="1.1" creator="akloc \(AklocVersion.string)" xmlns="http://www.topografix.com/GPX/1/1" \
                xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
                xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v2" \
                xmlns:akloc="urn:akloc:gpx:1" \
                xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">
                <trk><name>akloc track</name>

                """)
        case .geojson:
            text("{\"type\":\"FeatureCollection\",\"features\":[")
        case .csv:
            text(
                "time,latitude,longitude,altitude,speed,course,horizontalAccuracy,verticalAccuracy,mode,segment,"
                    + "receivedAt\n")
        case .ndjson:
            break
        }
    }

    private mutating func text(_ string: String) {
        buffer += string.utf8
    }

    private mutating func number(_ value: Double) {
        var writer = JSONWriter(capacity: 24)
        writer.number(value)
        buffer += writer.bytes
    }

    /// GPX's `fixType` (none, 2d, 3d, dgps, pps): DGPS and P(Y) have their
    /// own words; every other status (RTK too, which GPX does not name) is
    /// told by its dimension.
    static func gpxFix(_ location: Location) -> String {
        switch location.fixStatus {
        case .dgps: "dgps"
        case .pyCode: "pps"
        default: location.mode == .threeD ? "3d" : "2d"
        }
    }

    private mutating func gpx(_ point: TrackPoint) {
        if point.segment != segment {
            if segment != nil { text("</trkseg>\n") }
            text("<trkseg>\n")
            segment = point.segment
        }
        let location = point.location
        text("<trkpt lat=\"")
        number(location.latitude)
        text("\" lon=\"")
        number(location.longitude)
        text("\">")
        if let altitude = location.altitude {
            text("<ele>")
            number(altitude)
            text("</ele>")
        }
        if let time = location.timestamp ?? location.receivedAt { text("<time>\(time.iso8601)</time>") }
        text("<fix>\(TrackExporter.gpxFix(location))</fix>")
        if let used = location.satellitesUsed { text("<sat>\(used)</sat>") }
        if let hdop = location.hdop {
            text("<hdop>")
            number(hdop)
            text("</hdop>")
        }
        let extensions: [(String, Double?)] = [
            ("gpxtpx:speed", location.speed), ("gpxtpx:course", location.course),
        ]
        let accuracies: [(String, Double?)] = [
            ("akloc:horizontalAccuracy", location.horizontalAccuracy),
            ("akloc:verticalAccuracy", location.verticalAccuracy),
        ]
        if (extensions + accuracies).contains(where: { $0.1 != nil }) {
            text("<extensions>")
            if extensions.contains(where: { $0.1 != nil }) {
                text("<gpxtpx:TrackPointExtension>")
                for (name, value) in extensions {
                    guard let value else { continue }
                    text("<\(name)>")
                    number(value)
                    text("</\(name)>")
                }
                text("</gpxtpx:TrackPointExtension>")
            }
            for (name, value) in accuracies {
                guard let value else { continue }
                text("<\(name)>")
                number(value)
                text("</\(name)>")
            }
            text("</extensions>")
        }
        text("</trkpt>\n")
    }

    private mutating func csv(_ point: TrackPoint) {
        let location = point.location
        text((location.timestamp ?? location.receivedAt)?.iso8601 ?? "")
        for value in [
            location.latitude, location.longitude, location.altitude, location.speed, location.course,
            location.horizontalAccuracy, location.verticalAccuracy,
        ] as [Double?] {
            text(",")
            if let value { number(value) }
        }
        text(",\(location.mode.rawValue),\(point.segment),\(location.receivedAt?.iso8601 ?? "")\n")
    }

    private mutating func geojsonFeature() {
        if features > 0 { text(",") }
        features += 1
        text("\n{\"type\":\"Feature\",\"geometry\":{\"type\":")
        text(pending.count == 1 ? "\"Point\",\"coordinates\":" : "\"LineString\",\"coordinates\":[")
        for (index, location) in pending.enumerated() {
            if index > 0 { text(",") }
            text("[")
            number(location.longitude)
            text(",")
            number(location.latitude)
            if let altitude = location.altitude {
                text(",")
                number(altitude)
            }
            text("]")
        }
        if pending.count > 1 { text("]") }
        text("},\"properties\":{\"segment\":\(segment ?? 0),\"coordinateProperties\":{\"times\":[")
        for (index, location) in pending.enumerated() {
            if index > 0 { text(",") }
            if let time = location.timestamp ?? location.receivedAt {
                text("\"\(time.iso8601)\"")
            } else {
                text("null")
            }
        }
        text("]")
        for (name, value) in [
            ("speeds", \Location.speed), ("courses", \Location.course),
            ("horizontalAccuracies", \Location.horizontalAccuracy), ("verticalAccuracies", \Location.verticalAccuracy),
        ] as [(String, Swift.KeyPath<Location, Double?>)] {
            text(",\"\(name)\":[")
            for (index, location) in pending.enumerated() {
                if index > 0 { text(",") }
                if let number = location[keyPath: value] { self.number(number) } else { text("null") }
            }
            text("]")
        }
        text("}}}")
        pending.removeAll(keepingCapacity: true)
    }

    private mutating func flush() throws(CLIError) {
        guard !buffer.isEmpty else { return }
        let (fd, path): (Int32, String)
        switch sink {
        case .standardOutput: (fd, path) = (1, "standard output")
        case .descriptor(let file, let name): (fd, path) = (file, name)
        }
        do {
            try Syscall.writeAll(fd, buffer)
        } catch  where error == .brokenPipe && fd == 1 {
            exit(ExitCode.ok)  // `akloc track | head`: the reader has had enough
        } catch {
            throw .failure("writing \(path): \(error.message)")
        }
        bytesWritten += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }
}
