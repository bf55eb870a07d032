import AklocCore
import AklocGeo
import AklocJSON

/// Any line the daemon sends (docs/protocol.md §2, §3, §6), decoded once for
/// every client: the CLI, the map's daemon link, the Swift client library.
/// Each case is what one `ServerEncoder` function writes, and the
/// round-trip tests hold the two together.
///
/// What a newer daemon may add is not an error: an event, notification or
/// error name this client does not know, or a `change` of a key path it
/// does not know, is `.unknown` with all of the line's members, for the
/// client to ignore (§6). Everything else is checked: a known event with a
/// member missing or of the wrong type is refused, naming the member.
public enum ServerEvent: Hashable, Sendable {
    case hello(Hello)
    /// A reply: `ok:true` with its result, or the error (its `id` set too).
    /// What the result holds depends on the request (`DaemonStatus`,
    /// `TrackPage`, … read it).
    case reply(id: RequestID?, result: Result<JSONValue, ProtocolError>)
    case didGetFirstLocation(Location)
    /// `afterTimeInterval` nil: an update of the every-epoch stream.
    case didUpdateLocation(Location, afterTimeInterval: Double?)
    case didGetError(LocationError)
    case didGetNotification(AklocCore.Notification)
    case change(Change)
    case didEnterRegion(Region)
    case didExitRegion(Region)
    /// A visit began (no `departure`) or ended (the same visit with its
    /// `departure`), read whole (docs/protocol.md, `visits`).
    case didVisit(Visit)
    /// An event (or a notification, an error, a key path) of a newer
    /// protocol revision: its `event` name and all of its members.
    case unknown(name: String, fields: [String: JSONValue])

    /// The first line of every connection. A hello of another protocol
    /// version is refused by `decode`, so a client never reads one.
    public struct Hello: Hashable, Sendable {
        public var version: String
        public var authorizationStatus: AuthorizationStatus

        public init(version: String, authorizationStatus: AuthorizationStatus) {
            self.version = version
            self.authorizationStatus = authorizationStatus
        }
    }

    /// An observed key path's new value, and the previous one when the
    /// observer asked for `old` (`.null` when there was none).
    public struct Change: Hashable, Sendable {
        public var keyPath: KeyPath
        public var new: JSONValue
        public var old: JSONValue?

        public init(keyPath: KeyPath, new: JSONValue, old: JSONValue? = nil) {
            self.keyPath = keyPath
            self.new = new
            self.old = old
        }

        /// `new` as a location, when the key path carries whole locations.
        public var newLocation: Location? { Location(json: new) }
    }

    /// A monitored place entered or left, and the fix that decided it.
    public struct Region: Hashable, Sendable {
        public var name: String
        /// The saved place; nil when the daemon sent only its name (it was
        /// deleted in the same step).
        public var place: SavedPlace?
        public var location: Location

        public init(name: String, place: SavedPlace?, location: Location) {
            self.name = name
            self.place = place
            self.location = location
        }
    }

    /// The longest line a client reads from the daemon: a `track` page is
    /// at most 512 KiB, a status or a places list far less.
    public static let maxLineLength = 1 << 20

    /// The location an event carries, if any: a delegate update, a region
    /// event, or a `change` of a location key path.
    public var location: Location? {
        switch self {
        case .didGetFirstLocation(let location), .didUpdateLocation(let location, _): location
        case .didEnterRegion(let region), .didExitRegion(let region): region.location
        case .change(let change): change.newLocation
        case .hello, .reply, .didGetError, .didGetNotification, .didVisit, .unknown: nil
        }
    }

    /// Decodes one line (without its newline). A line that is not JSON is
    /// `badJSON`; one longer than `maxLineLength` is `lineTooLong`; one that
    /// is not a message of this protocol (or a hello of another version) is
    /// `badRequest`, naming the member at fault.
    public static func decode<Bytes: Collection<UInt8>>(_ line: Bytes) -> Result<ServerEvent, ProtocolError> {
        guard line.count <= maxLineLength else {
            return .failure(ProtocolError(.lineTooLong, "a line from the daemon longer than \(maxLineLength) bytes"))
        }
        switch JSONValue.parse(line) {
        case .failure(let error):
            return .failure(ProtocolError(.badJSON, "invalid JSON from the daemon: \(error)"))
        case .success(let json):
            return decode(json: json)
        }
    }

    public static func decode(json: JSONValue) -> Result<ServerEvent, ProtocolError> {
        do {
            return .success(try decoding(json))
        } catch {
            return .failure(error)
        }
    }

    private static func decoding(_ json: JSONValue) throws(ProtocolError) -> ServerEvent {
        guard case .object(let members) = json else {
            throw ProtocolError(.badRequest, "a message must be a JSON object, not \(json.typeName)")
        }
        guard let event = members["event"] else { return try reply(members) }
        guard case .string(let name) = event else {
            throw ProtocolError(.badRequest, "\"event\" must be a string, not \(event.typeName)")
        }
        do {
            return try self.event(name, members)
        } catch {
            throw ProtocolError(.badRequest, "\(name): \(error.message)")
        }
    }

    private static func event(_ name: String, _ members: [String: JSONValue]) throws(ProtocolError) -> ServerEvent {
        let fields = Fields(members: members)
        switch name {
        case "hello":
            let version = try fields.require("protocol", "an integer") { value in
                if case .int(let number) = value { number } else { nil }
            }
            guard version == Int64(AklocProtocolVersion.protocolVersion) else {
                throw ProtocolError(
                    .badRequest,
                    "the daemon speaks protocol \(version); this client speaks protocol "
                        + "\(AklocProtocolVersion.protocolVersion)")
            }
            return .hello(
                Hello(
                    version: try fields.require("version", "a string") { $0.stringValue },
                    authorizationStatus: try fields.require("authorizationStatus", "an authorization status") {
                        $0.stringValue.flatMap(AuthorizationStatus.init(rawValue:))
                    }))
        case "didGetFirstLocation":
            return .didGetFirstLocation(try fields.location())
        case "didUpdateLocation":
            let location = try fields.location()
            return .didUpdateLocation(
                location,
                afterTimeInterval: try fields.optional("afterTimeInterval", "a number of seconds, at least 0") {
                    guard let seconds = $0.doubleValue, seconds >= 0 else { return nil }
                    return seconds
                })
        case "didGetError":
            let text = try fields.require("error", "a string") { $0.stringValue }
            guard let error = LocationError(rawValue: text) else { return .unknown(name: name, fields: members) }
            return .didGetError(error)
        case "didGetNotification":
            let text = try fields.require("notification", "a string") { $0.stringValue }
            guard let notification = AklocCore.Notification(rawValue: text) else {
                return .unknown(name: name, fields: members)
            }
            return .didGetNotification(notification)
        case "change":
            let text = try fields.require("keyPath", "a string") { $0.stringValue }
            let new = try fields.require("new", "a value") { $0 }
            guard let keyPath = try? KeyPath(parsing: text) else { return .unknown(name: name, fields: members) }
            return .change(Change(keyPath: keyPath, new: new, old: members["old"]))
        case "didEnterRegion":
            return .didEnterRegion(try region(fields))
        case "didExitRegion":
            return .didExitRegion(try region(fields))
        case "didVisit":
            let visit = try fields.require("visit", "a visit object") { value in
                if case .object = value { value } else { nil }
            }
            return .didVisit(try Visit(json: visit))
        default:
            return .unknown(name: name, fields: members)
        }
    }

    /// A region event's place is the whole saved place, or `{"name":…}` alone.
    private static func region(_ fields: Fields) throws(ProtocolError) -> Region {
        let json = try fields.require("place", "a place object") { value in
            if case .object = value { value } else { nil }
        }
        guard case .string(let name)? = json["name"] else {
            throw ProtocolError(.badRequest, "\"place.name\" must be a string")
        }
        var place: SavedPlace?
        if json.objectValue?.count != 1 {
            do {
                place = try SavedPlace(json: json)
            } catch {
                throw ProtocolError(.badRequest, "\"place.\(error.field)\": \(error.message)")
            }
        }
        return Region(name: name, place: place, location: try fields.location())
    }

    private static func reply(_ members: [String: JSONValue]) throws(ProtocolError) -> ServerEvent {
        let fields = Fields(members: members)
        let ok = try fields.require("ok", "true or false (or the message an \"event\")") { $0.boolValue }
        var id: RequestID?
        if let value = members["id"], value != .null {
            guard let valid = RequestID(json: value) else {
                throw ProtocolError(.badRequest, "\"id\" must be a number, a string or null, not \(value.typeName)")
            }
            id = valid
        }
        if ok {
            return .reply(id: id, result: .success(try fields.require("result", "a value") { $0 }))
        }
        let error = try fields.require("error", "an object with \"code\" and \"message\"") { $0.objectValue }
        let errorFields = Fields(members: error, prefix: "error.")
        let code = try errorFields.require("code", "a string") { $0.stringValue }
        let message = try errorFields.require("message", "a string") { $0.stringValue }
        return .reply(id: id, result: .failure(ProtocolError(ErrorCode(rawValue: code), message, id: id)))
    }

    /// Typed access to a message's members; errors name the member.
    private struct Fields {
        let members: [String: JSONValue]
        var prefix = ""

        func require<T>(_ key: String, _ expected: String, _ read: (JSONValue) -> T?) throws(ProtocolError) -> T {
            guard let value = members[key] else { throw ProtocolError(.badRequest, "missing \"\(prefix)\(key)\"") }
            guard let typed = read(value) else {
                let found = value.doubleValue != nil ? value.jsonString : value.typeName
                throw ProtocolError(.badRequest, "\"\(prefix)\(key)\" must be \(expected), not \(found)")
            }
            return typed
        }

        func optional<T>(_ key: String, _ expected: String, _ read: (JSONValue) -> T?) throws(ProtocolError) -> T? {
            guard members[key] != nil else { return nil }
            return try require(key, expected, read)
        }

        func location() throws(ProtocolError) -> Location {
            try Location(wire: require("location", "a location object") { $0 })
        }
    }
}
