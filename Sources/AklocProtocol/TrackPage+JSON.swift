import AklocCore
import AklocJSON

extension TrackPage {
    /// One point: the wire location object with `"segment"` added.
    public static func write(_ point: TrackPoint, to writer: inout JSONWriter) {
        ServerEncoder.writeLocation(point.location, to: &writer)
        writer.bytes.removeLast()
        writer.raw(",\"segment\":")
        writer.integer(Int64(truncatingIfNeeded: point.segment))
        writer.byte(UInt8(ascii: "}"))
    }

    /// Reads a `track` reply's `result`; nil when it is not that shape.
    public init?(json: JSONValue) {
        guard case .array(let list)? = json["points"] else { return nil }
        var points: [TrackPoint] = []
        points.reserveCapacity(list.count)
        for item in list {
            guard let location = Location(json: item), case .int(let segment)? = item["segment"], segment >= 0 else {
                return nil
            }
            points.append(TrackPoint(location: location, segment: UInt64(segment)))
        }
        switch json["next"] {
        case .string(let next)?: self.init(points: points, next: next)
        case nil, .null?: self.init(points: points, next: nil)
        default: return nil
        }
    }
}
