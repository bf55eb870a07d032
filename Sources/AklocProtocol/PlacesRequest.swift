import AklocCore
import AklocGeo
import AklocJSON

/// The saved-place and region ops (DESIGN §9), decoded and checked: known
/// members, types, a coordinate on the Earth, and the rules of a place's own
/// values (`SavedPlace`'s name, radius and note rules in AklocGeo), so the
/// daemon never sees an argument it would refuse and answers a bad one with
/// `badRequest` naming it before it looks at a fix or a right.
public enum PlacesRequest: Sendable, Equatable {
    case savePlace(PlaceDraft)
    case places
    case deletePlace(name: String)
    /// `names` nil means every place the caller sees.
    case startMonitoring(names: [String]?)
    case stopMonitoring(names: [String]?)

    public var name: String {
        switch self {
        case .savePlace: "savePlace"
        case .places: "places"
        case .deletePlace: "deletePlace"
        case .startMonitoring: "startMonitoring"
        case .stopMonitoring: "stopMonitoring"
        }
    }

    public static let operationNames = ["savePlace", "places", "deletePlace", "startMonitoring", "stopMonitoring"]

    /// More names than anyone can have places is not a list to look up.
    public static let maxMonitoredNames = 1000
}

/// A `savePlace` request before the daemon fills the coordinate (the
/// current fix when absent) and the owner.
public struct PlaceDraft: Sendable, Equatable {
    public var name: String
    public var latitude: Double?
    public var longitude: Double?
    public var radius: Double?
    public var note: String?
    public var shared: Bool

    public init(
        name: String, latitude: Double? = nil, longitude: Double? = nil, radius: Double? = nil, note: String? = nil,
        shared: Bool = false
    ) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.radius = radius
        self.note = note
        self.shared = shared
    }
}

extension PlacesRequest {
    /// Decodes the members of one of `operationNames` (`op` already read).
    /// Unlike the older ops, an unknown member is refused: a misspelt
    /// `radius` must not save a place with the default one.
    static func decode(op: String, members: [String: JSONValue]) throws(ProtocolError) -> PlacesRequest {
        let allowed: Set<String>
        switch op {
        case "savePlace": allowed = ["name", "coordinate", "radius", "note", "shared"]
        case "deletePlace": allowed = ["name"]
        case "startMonitoring", "stopMonitoring": allowed = ["places"]
        default: allowed = []
        }
        for key in members.keys.sorted() where key != "id" && key != "op" && !allowed.contains(key) {
            let shown = key.count > 64 ? String(key.prefix(64)) + "…" : key
            throw ProtocolError(.badRequest, "\(op) has no member \"\(shown)\"")
        }
        switch op {
        case "savePlace":
            let name = try string(members, "name")!
            try ProtocolError.checking { () throws(GeoQueryError) in try SavedPlace.checkName(name) }
            var draft = PlaceDraft(name: name)
            if let value = members["coordinate"], value != .null {
                guard case .object(let coordinate) = value else {
                    throw ProtocolError(.badRequest, "\"coordinate\" must be an object, not \(value.typeName)")
                }
                for key in coordinate.keys.sorted() where key != "latitude" && key != "longitude" {
                    let shown = key.count > 64 ? String(key.prefix(64)) + "…" : key
                    throw ProtocolError(.badRequest, "\"coordinate\" has no member \"\(shown)\"")
                }
                draft.latitude = try degrees(coordinate["latitude"], "coordinate.latitude", limit: 90)
                draft.longitude = try degrees(coordinate["longitude"], "coordinate.longitude", limit: 180)
            }
            if let value = members["radius"], value != .null {
                guard let radius = value.doubleValue else {
                    throw ProtocolError(.badRequest, "\"radius\" must be a number of metres, not \(value.typeName)")
                }
                try ProtocolError.checking { () throws(GeoQueryError) in try SavedPlace.checkRadius(radius) }
                draft.radius = radius
            }
            draft.note = try string(members, "note", required: false)
            if let note = draft.note {
                try ProtocolError.checking { () throws(GeoQueryError) in try SavedPlace.checkNote(note) }
            }
            if let value = members["shared"], value != .null {
                guard case .bool(let flag) = value else {
                    throw ProtocolError(.badRequest, "\"shared\" must be true or false, not \(value.typeName)")
                }
                draft.shared = flag
            }
            return .savePlace(draft)
        case "places":
            return .places
        case "deletePlace":
            let name = try string(members, "name")!
            try ProtocolError.checking { () throws(GeoQueryError) in try SavedPlace.checkName(name) }
            return .deletePlace(name: name)
        case "startMonitoring":
            return .startMonitoring(names: try names(members["places"]))
        default:
            return .stopMonitoring(names: try names(members["places"]))
        }
    }

    private static func string(
        _ members: [String: JSONValue], _ name: String, required: Bool = true
    ) throws(ProtocolError) -> String? {
        try RequestArguments(members).string(name, required: required)
    }

    private static func degrees(_ value: JSONValue?, _ field: String, limit: Double) throws(ProtocolError) -> Double {
        guard let value else { throw ProtocolError(.badRequest, "missing \"\(field)\"") }
        guard let number = value.doubleValue else {
            throw ProtocolError(.badRequest, "\"\(field)\" must be a number of degrees, not \(value.typeName)")
        }
        guard number.isFinite, abs(number) <= limit else {
            throw ProtocolError(.badRequest, "\"\(field)\" must be within ±\(Int(limit))")
        }
        return number
    }

    private static func names(_ value: JSONValue?) throws(ProtocolError) -> [String]? {
        guard let value, value != .null else { return nil }
        guard case .array(let list) = value else {
            throw ProtocolError(.badRequest, "\"places\" must be an array of place names, not \(value.typeName)")
        }
        guard list.count <= maxMonitoredNames else {
            throw ProtocolError(.badRequest, "\"places\" names more than \(maxMonitoredNames) places")
        }
        var names: [String] = []
        for element in list {
            guard case .string(let name) = element else {
                throw ProtocolError(.badRequest, "\"places\" must hold strings, not \(element.typeName)")
            }
            try ProtocolError.checking { () throws(GeoQueryError) in try SavedPlace.checkName(name, field: "places") }
            names.append(name)
        }
        return names
    }

    /// The members after `"op":"…"` on the client side (`encodedLine`).
    func write(to writer: inout JSONWriter) {
        switch self {
        case .places:
            break
        case .deletePlace(let name):
            writer.raw(",\"name\":")
            writer.string(name)
        case .startMonitoring(let names), .stopMonitoring(let names):
            guard let names else { return }
            writer.raw(",\"places\":")
            writer.value(.array(names.map(JSONValue.string)))
        case .savePlace(let draft):
            writer.raw(",\"name\":")
            writer.string(draft.name)
            if let latitude = draft.latitude, let longitude = draft.longitude {
                writer.raw(",\"coordinate\":")
                ServerEncoder.writeValue(.coordinate(latitude: latitude, longitude: longitude), to: &writer)
            }
            if let radius = draft.radius {
                writer.raw(",\"radius\":")
                writer.number(radius)
            }
            if let note = draft.note {
                writer.raw(",\"note\":")
                writer.string(note)
            }
            if draft.shared { writer.raw(",\"shared\":true") }
        }
    }
}
