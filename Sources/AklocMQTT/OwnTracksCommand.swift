import AklocCore
import AklocGeo
import AklocJSON

/// One OwnTracks command as it arrives on `<topic>/cmd`
/// (https://owntracks.org/booklet/tech/json/, `_type=cmd`), checked and
/// decoded. Pure: payload bytes and the enabled set in, a command or the
/// reason it is refused out. A broker is not trusted: whatever it sends
/// ends in one of the two, never a trap (fuzz/CommandFuzzer.swift).
public enum OwnTracksCommand: Hashable, Sendable {
    /// Publish a fresh fix now, past the throttle (`t:"r"`).
    case reportLocation
    /// Publish the shared saved places as `waypoints`.
    case waypoints
    /// Publish the effective `[mqtt]` settings as a `configuration` on `<topic>/dump`.
    case dump
    /// Add, or replace by name, places of the configured owner.
    case setWaypoints([OwnTracksPayload.Waypoint])

    /// The commands akloc carries out, by their OwnTracks `action`.
    public enum Action: String, CaseIterable, Hashable, Sendable, Comparable {
        case reportLocation
        case waypoints
        case dump
        case setWaypoints

        public static func < (lhs: Action, rhs: Action) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// A `setWaypoints` of a full owner's places (1000 of about 120 bytes)
    /// fits; anything larger is not a command akloc would carry out.
    public static let maxPayloadBytes = 256 * 1024
    /// Objects and arrays nest at most this deep (`{"waypoints":{"waypoints":[{…}]}}` is 4).
    static let maxDepth = 8

    public var action: Action {
        switch self {
        case .reportLocation: .reportLocation
        case .waypoints: .waypoints
        case .dump: .dump
        case .setWaypoints: .setWaypoints
        }
    }

    /// Decodes `payload`; a command not in `enabled` is refused
    /// (`notEnabled`) after it was recognised, so the log names it.
    public static func parse<Bytes: Collection<UInt8>>(_ payload: Bytes, enabled: Set<Action>)
        -> Result<OwnTracksCommand, OwnTracksCommandError>
    {
        guard payload.count <= maxPayloadBytes else {
            return .failure(
                OwnTracksCommandError(.tooLarge, "longer than the \(maxPayloadBytes) bytes accepted"))
        }
        let value: JSONValue
        switch JSONValue.parse(payload, maxDepth: maxDepth) {
        case .success(let parsed): value = parsed
        case .failure(let error): return .failure(OwnTracksCommandError(.malformed, "not JSON: \(error)"))
        }
        guard let object = value.objectValue else {
            return .failure(OwnTracksCommandError(.malformed, "a JSON \(value.typeName), not an object"))
        }
        guard object["_type"]?.stringValue == "cmd" else {
            let type = object["_type"].map { $0.stringValue.map { "\"\(shown($0))\"" } ?? $0.typeName } ?? "missing"
            return .failure(OwnTracksCommandError(.notACommand, "_type is \(type), not \"cmd\""))
        }
        guard let name = object["action"]?.stringValue else {
            return .failure(OwnTracksCommandError(.unknownAction, "no action string"))
        }
        guard let action = Action(rawValue: name) else {
            return .failure(
                OwnTracksCommandError(.unknownAction, "action \"\(shown(name))\" is not one akloc carries out"))
        }
        guard enabled.contains(action) else {
            return .failure(OwnTracksCommandError(.notEnabled, "\(name) is not in [mqtt] commands"))
        }
        switch action {
        case .reportLocation: return .success(.reportLocation)
        case .waypoints: return .success(.waypoints)
        case .dump: return .success(.dump)
        case .setWaypoints: return waypoints(in: object).map(OwnTracksCommand.setWaypoints)
        }
    }

    /// The list as the booklet and the apps send it: `"waypoints":
    /// {"_type":"waypoints","waypoints":[…]}`, the Android app's newer
    /// `"payload": {…}` of the same shape, or the older bare array.
    private static func waypoints(in command: [String: JSONValue])
        -> Result<[OwnTracksPayload.Waypoint], OwnTracksCommandError>
    {
        let list: [JSONValue]
        switch command["waypoints"] ?? command["payload"] {
        case .array(let items)?:
            list = items
        case .object(let inner)?:
            guard inner["_type"] == nil || inner["_type"]?.stringValue == "waypoints",
                let items = inner["waypoints"]?.arrayValue
            else { return .failure(bad("the waypoints object has no \"waypoints\" array")) }
            list = items
        default:
            return .failure(bad("no waypoints list"))
        }
        guard list.count <= SavedPlace.maxPerOwner else {
            return .failure(bad("\(list.count) waypoints, more than an owner's \(SavedPlace.maxPerOwner) places"))
        }
        var waypoints: [OwnTracksPayload.Waypoint] = []
        waypoints.reserveCapacity(list.count)
        var names: Set<String> = []
        for (index, item) in list.enumerated() {
            switch waypoint(item) {
            case .success(let waypoint):
                guard names.insert(waypoint.name).inserted else {
                    return .failure(bad("waypoint \(index): \"\(shown(waypoint.name))\" twice"))
                }
                waypoints.append(waypoint)
            case .failure(let why):
                return .failure(bad("waypoint \(index): \(why.message)"))
            }
        }
        return .success(waypoints)
    }

    /// `{"_type":"waypoint","desc","lat","lon","rad","tst"}`: `desc` is the
    /// place's name, `tst` its creation time; without `rad`, the default
    /// radius. Beacon fields (`uuid`, `major`, `minor`) are not places.
    private static func waypoint(_ value: JSONValue) -> Result<OwnTracksPayload.Waypoint, OwnTracksCommandError> {
        guard let object = value.objectValue else { return .failure(bad("a \(value.typeName), not an object")) }
        if let type = object["_type"], type.stringValue != "waypoint" {
            return .failure(bad("_type is not \"waypoint\""))
        }
        guard let name = object["desc"]?.stringValue else { return .failure(bad("no desc string")) }
        guard let latitude = object["lat"]?.doubleValue, let longitude = object["lon"]?.doubleValue else {
            return .failure(bad("lat and lon must be numbers"))
        }
        let radius: Double
        switch object["rad"] {
        case nil: radius = SavedPlace.defaultRadius
        case let rad?:
            guard let value = rad.doubleValue else { return .failure(bad("rad must be a number")) }
            radius = value
        }
        let created: Int64
        switch object["tst"] {
        case nil: created = 0
        case .int(let seconds)? where seconds >= 0 && seconds < 1 << 40: created = seconds
        default: return .failure(bad("tst must be whole seconds since 1970"))
        }
        guard Coordinate(latitude: latitude, longitude: longitude).isValid else {
            return .failure(bad("lat/lon must be within ±90 and ±180"))
        }
        do throws(GeoQueryError) {
            try SavedPlace.checkName(name, field: "desc")
            try SavedPlace.checkRadius(radius)
        } catch {
            return .failure(bad(error.message))
        }
        return .success(
            OwnTracksPayload.Waypoint(
                name: name, latitude: latitude, longitude: longitude, radius: radius,
                createdAt: FixTime(secondsSince1970: created)))
    }

    private static func bad(_ message: String) -> OwnTracksCommandError {
        OwnTracksCommandError(.badWaypoints, message)
    }

    /// A broker's string in a log line: at most 64 characters, control
    /// characters as `?`, so one message cannot flood or forge log lines.
    static func shown(_ text: String) -> String {
        var cleaned = String.UnicodeScalarView()
        for scalar in text.unicodeScalars.prefix(64) {
            cleaned.append(scalar.value < 0x20 || scalar.value == 0x7F ? "?" : scalar)
        }
        return String(cleaned) + (text.unicodeScalars.count > 64 ? "…" : "")
    }
}
