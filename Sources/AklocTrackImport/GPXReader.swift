import AklocCore
import AklocProtocol

/// The track points of a GPX 1.0 or 1.1 file, streamed: each `trkpt` of
/// each `trk`/`trkseg` with its `lat`, `lon`, `time` and `ele`. `time` is
/// optional in GPX and loggers leave it out, but a point without one cannot
/// be placed in the time-ordered journal: it is passed over and counted in
/// `untimed` (its coordinates are still checked). Routes and waypoints are
/// not a track and are passed over; so is everything inside `extensions`.
/// Each `trkseg` is its own segment.
struct GPXReader {
    private var xml: XMLPullReader
    private var segment: Int64 = -1
    private var checkedRoot = false
    /// The point being read: where it started, its attributes, its children so far.
    private var point: (offset: Int, latitude: Double, longitude: Double, time: FixTime?, altitude: Double?)?
    /// The element whose text is wanted (`time` or `ele` of a `trkpt`), and its text so far.
    private var field: (name: String, offset: Int, text: String)?
    /// Depth inside elements that are passed over (`extensions` of a point).
    private var skipping = 0
    /// Track points passed over so far because they have no `<time>`.
    private(set) var untimed = 0

    init(stream: ByteStream) {
        xml = XMLPullReader(stream: stream)
    }

    mutating func next() throws(TrackImportError) -> (point: ImportPoint, offset: Int)? {
        while let (event, offset) = try xml.next() {
            if !checkedRoot {
                guard case .start(let name, let attributes, _) = event else { continue }
                try checkRoot(name, attributes, at: offset)
                continue
            }
            if skipping > 0 {
                switch event {
                case .start(_, _, let empty): if !empty { skipping += 1 }
                case .end: skipping -= 1
                case .text: break
                }
                continue
            }
            switch event {
            case .start(let name, let attributes, let empty):
                if name == "trkseg" {
                    segment += 1
                } else if name == "trkpt" {
                    let parent = xml.open.count - (empty ? 1 : 2)
                    guard parent >= 0, XMLPullReader.localName(xml.open[parent]) == "trkseg" else {
                        throw .at(offset, .malformed, "a <trkpt> outside a <trkseg>")
                    }
                    point = (
                        offset, try coordinate("lat", attributes, at: offset),
                        try coordinate("lon", attributes, at: offset), nil, nil
                    )
                } else if point != nil {
                    if name == "time" || name == "ele" {
                        field = (name, offset, "")
                    } else if name == "extensions" {
                        skipping = 1
                    }
                }
            case .text(let text):
                if field != nil { field!.text += text }
            case .end(let name):
                if let current = field, current.name == name {
                    field = nil
                    try store(current)
                } else if name == "trkpt", let current = point {
                    point = nil
                    // A point without a time is checked as if at 1970, so a bad
                    // latitude refuses the file whether or not the point has a time.
                    let imported = ImportPoint(
                        time: current.time ?? FixTime(secondsSince1970: 0), latitude: current.latitude,
                        longitude: current.longitude, altitude: current.altitude, segment: max(0, segment))
                    if let problem = imported.problem() { throw .at(current.offset, .badPoint, "<trkpt>: \(problem)") }
                    guard current.time != nil else {
                        untimed += 1
                        continue
                    }
                    return (imported, current.offset)
                }
            }
        }
        return nil
    }

    private mutating func checkRoot(_ name: String, _ attributes: [String: String], at offset: Int)
        throws(TrackImportError)
    {
        guard name == "gpx" else { throw .at(offset, .unknownFormat, "not a GPX file: the root element is <\(name)>") }
        guard let version = attributes["version"], version == "1.0" || version == "1.1" else {
            throw .at(
                offset, .unknownFormat,
                "<gpx> version \(attributes["version"].map { "\"\($0)\"" } ?? "missing") (1.0 and 1.1 are read)")
        }
        checkedRoot = true
    }

    private func coordinate(_ name: String, _ attributes: [String: String], at offset: Int) throws(TrackImportError)
        -> Double
    {
        guard let text = attributes[name] else { throw .at(offset, .badPoint, "a <trkpt> without \(name)") }
        guard let value = Double(text.trimmingWhitespace), value.isFinite else {
            throw .at(offset, .badPoint, "<trkpt> \(name)=\"\(text.prefix(40))\" is not a number")
        }
        return value
    }

    private mutating func store(_ field: (name: String, offset: Int, text: String)) throws(TrackImportError) {
        let text = field.text.trimmingWhitespace
        if field.name == "time" {
            guard let time = TrackTime.parse(text) else {
                throw .at(field.offset, .badPoint, "<time>\(text.prefix(40))</time> is not an ISO 8601 time")
            }
            point?.time = time
        } else {
            guard let value = Double(text), value.isFinite else {
                throw .at(field.offset, .badPoint, "<ele>\(text.prefix(40))</ele> is not a number")
            }
            point?.altitude = value
        }
    }
}

extension String {
    var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
