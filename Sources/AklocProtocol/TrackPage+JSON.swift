import AklocCore
import AklocJSON

extension TrackPage {
    /// Writes a `track` reply point by point, so the daemon can stop a page
    /// at a byte budget (a reply must stay under a client's hard limit):
    /// `{"id":…,"ok":true,"result":{"points":[{location…,"segment":3},…],"next":"…"}}`.
    public struct ReplyWriter {
        public private(set) var writer: JSONWriter
        public private(set) var count = 0

        public init(id: RequestID?, capacity: Int = 1 << 16) {
            writer = JSONWriter(capacity: capacity)
            ServerEncoder.writeReplyHead(id: id, to: &writer)
            writer.raw("{\"points\":[")
        }

        public var byteCount: Int { writer.bytes.count }

        public mutating func append(_ point: TrackPoint) {
            if count > 0 { writer.byte(UInt8(ascii: ",")) }
            TrackPage.write(point, to: &writer)
            count += 1
        }

        /// The whole reply line, ending in "\n".
        public mutating func finish(next: String?) -> [UInt8] {
            writer.raw("],\"next\":")
            if let next { writer.string(next) } else { writer.raw("null") }
            writer.raw("}}\n")
            return writer.bytes
        }
    }

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
