import AklocCore
import AklocJSON

/// One point of a track being imported (`akloc track import`, docs/track.md):
/// what the file says of it, checked by the reader and again by the daemon.
public struct ImportPoint: Hashable, Sendable {
    public var time: FixTime
    public var latitude: Double
    public var longitude: Double
    /// Metres above mean sea level, when the file has it.
    public var altitude: Double?
    /// Metres, when the file has it (Google's `accuracy`).
    public var horizontalAccuracy: Double?
    /// The file's own segment (a GPX `trkseg`), counted from 0 by the
    /// reader; exports without segments say 0 throughout.
    public var segment: Int64

    public init(
        time: FixTime, latitude: Double, longitude: Double, altitude: Double? = nil, horizontalAccuracy: Double? = nil,
        segment: Int64 = 0
    ) {
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.segment = segment
    }

    /// The widest altitude accepted, metres (below the Dead Sea shore to past airliners).
    public static let altitudeRange = -1_000.0...100_000.0
    /// The worst accuracy accepted, metres (Google writes cell-tower fixes of some kilometres).
    public static let maxAccuracy = 1_000_000.0

    /// Why this point cannot be a track point, naming the field; nil when it can.
    public func problem() -> String? {
        guard latitude.isFinite, (-90...90).contains(latitude) else { return "latitude \(latitude) is not in -90...90" }
        guard longitude.isFinite, (-180...180).contains(longitude) else {
            return "longitude \(longitude) is not in -180...180"
        }
        if let altitude, !(altitude.isFinite && Self.altitudeRange.contains(altitude)) {
            return "altitude \(altitude) m is not in -1000...100000"
        }
        if let accuracy = horizontalAccuracy, !(accuracy.isFinite && accuracy >= 0 && accuracy <= Self.maxAccuracy) {
            return "accuracy \(accuracy) m is not in 0...1000000"
        }
        guard time.secondsSince1970 >= 0, time.secondsSince1970 <= TrackTime.maxSeconds,
            (0..<1_000_000_000).contains(time.nanoseconds)
        else { return "time is not between 1970 and 9999" }
        guard segment >= 0 else { return "segment \(segment) is negative" }
        return nil
    }
}

/// `importTrack` (admin): one connection's import, in steps the client
/// drives, so each request does a bounded amount of work and the daemon
/// keeps serving everyone else between them (docs/protocol.md).
public enum TrackImportRequest: Sendable, Equatable {
    /// Stage these points (a connection's first `add` begins its import).
    case add([ImportPoint])
    /// Merge the staged points into the journal, a bounded part per
    /// request; the client repeats it until the reply says `done`.
    case commit
    /// Forget the staged points (as closing the connection does).
    case abort

    /// The most points one `add` may carry (a 64 KiB line holds about 1 000).
    public static let maxPoints = 10_000

    public var action: String {
        switch self {
        case .add: "add"
        case .commit: "commit"
        case .abort: "abort"
        }
    }
}

extension ClientRequest {
    /// `importTrack`: `action` (`add` with `points`, `commit`, `abort`).
    /// A point is `[seconds, nanoseconds, latitude, longitude, altitude,
    /// accuracy, segment]`, altitude and accuracy `null` when unknown.
    static func decodeTrackImport(_ members: [String: JSONValue]) throws(ProtocolError) -> TrackImportRequest {
        guard let action = members["action"], action != .null else {
            throw ProtocolError(.badRequest, "missing \"action\" (\"add\", \"commit\" or \"abort\")")
        }
        switch action {
        case "commit": return .commit
        case "abort": return .abort
        case "add": break
        default:
            throw ProtocolError(
                .badRequest, "\"action\" must be \"add\", \"commit\" or \"abort\", not \(action.jsonString.prefix(64))")
        }
        guard case .array(let list)? = members["points"] else {
            throw ProtocolError(
                .badRequest, "\"points\" must be an array of points, not \(members["points"]?.typeName ?? "missing")")
        }
        guard !list.isEmpty, list.count <= TrackImportRequest.maxPoints else {
            throw ProtocolError(.badRequest, "\"points\" must hold 1-\(TrackImportRequest.maxPoints) points")
        }
        var points: [ImportPoint] = []
        points.reserveCapacity(list.count)
        for (index, value) in list.enumerated() {
            points.append(try decodeImportPoint(value, field: "points[\(index)]"))
        }
        return .add(points)
    }

    private static func decodeImportPoint(_ value: JSONValue, field: String) throws(ProtocolError) -> ImportPoint {
        guard case .array(let items) = value, items.count == 7 else {
            throw ProtocolError(
                .badRequest,
                "\"\(field)\" must be [seconds, nanoseconds, latitude, longitude, altitude, accuracy, segment]")
        }
        func integer(_ index: Int, _ name: String) throws(ProtocolError) -> Int64 {
            guard case .int(let number) = items[index] else {
                throw ProtocolError(
                    .badRequest, "\"\(field)\" \(name) must be a whole number, not \(items[index].typeName)")
            }
            return number
        }
        func number(_ index: Int, _ name: String, optional: Bool) throws(ProtocolError) -> Double? {
            if optional, items[index] == .null { return nil }
            guard let number = items[index].doubleValue else {
                throw ProtocolError(.badRequest, "\"\(field)\" \(name) must be a number, not \(items[index].typeName)")
            }
            return number
        }
        let seconds = try integer(0, "seconds")
        let nanoseconds = try integer(1, "nanoseconds")
        guard (0..<1_000_000_000).contains(nanoseconds) else {
            throw ProtocolError(.badRequest, "\"\(field)\" nanoseconds must be 0-999999999")
        }
        let point = ImportPoint(
            time: FixTime(secondsSince1970: seconds, nanoseconds: Int32(nanoseconds)),
            latitude: try number(2, "latitude", optional: false)!,
            longitude: try number(3, "longitude", optional: false)!,
            altitude: try number(4, "altitude", optional: true),
            horizontalAccuracy: try number(5, "accuracy", optional: true), segment: try integer(6, "segment"))
        if let problem = point.problem() { throw ProtocolError(.badRequest, "\"\(field)\": \(problem)") }
        return point
    }

    /// The members after `"op":"importTrack"` on the client side.
    func writeTrackImport(_ request: TrackImportRequest, to writer: inout JSONWriter) {
        writer.raw(",\"action\":")
        writer.string(request.action)
        guard case .add(let points) = request else { return }
        writer.raw(",\"points\":[")
        for (index, point) in points.enumerated() {
            if index > 0 { writer.byte(UInt8(ascii: ",")) }
            Self.writeImportPoint(point, to: &writer)
        }
        writer.byte(UInt8(ascii: "]"))
    }

    /// One point as `add` carries it; the CLI sizes its batches with this.
    public static func writeImportPoint(_ point: ImportPoint, to writer: inout JSONWriter) {
        writer.byte(UInt8(ascii: "["))
        writer.integer(point.time.secondsSince1970)
        writer.byte(UInt8(ascii: ","))
        writer.integer(Int64(point.time.nanoseconds))
        writer.byte(UInt8(ascii: ","))
        writer.number(point.latitude)
        writer.byte(UInt8(ascii: ","))
        writer.number(point.longitude)
        writer.byte(UInt8(ascii: ","))
        if let altitude = point.altitude { writer.number(altitude) } else { writer.raw("null") }
        writer.byte(UInt8(ascii: ","))
        if let accuracy = point.horizontalAccuracy { writer.number(accuracy) } else { writer.raw("null") }
        writer.byte(UInt8(ascii: ","))
        writer.integer(point.segment)
        writer.byte(UInt8(ascii: "]"))
    }
}
