import AklocCore
import AklocJSON

/// Any line the daemon sends, decoded on the client side (the CLI, tests).
public enum ServerMessage: Hashable, Sendable {
    case hello(Hello)
    /// A reply: `ok:true` with its result, or the error (its `id` set too).
    case reply(id: RequestID?, result: Result<JSONValue, ProtocolError>)
    /// Any other event, by name (`didUpdateLocation`, `change`, …), with all
    /// of the line's members (including `event`).
    case event(name: String, fields: [String: JSONValue])

    public struct Hello: Hashable, Sendable {
        public var protocolVersion: Int64
        public var version: String
        public var authorizationStatus: String

        public init(protocolVersion: Int64, version: String, authorizationStatus: String) {
            self.protocolVersion = protocolVersion
            self.version = version
            self.authorizationStatus = authorizationStatus
        }
    }

    /// Decodes one line (without its newline). A line that is not JSON or
    /// not a message this protocol defines is an error with code `badJSON`
    /// or `badRequest` (from the client's point of view: a bad message).
    public static func decode<Bytes: Collection<UInt8>>(_ line: Bytes) -> Result<ServerMessage, ProtocolError> {
        switch JSONValue.parse(line) {
        case .failure(let error):
            return .failure(ProtocolError(.badJSON, "invalid JSON from the daemon: \(error)"))
        case .success(let json):
            return decode(json: json)
        }
    }

    public static func decode(json: JSONValue) -> Result<ServerMessage, ProtocolError> {
        guard case .object(let members) = json else {
            return .failure(ProtocolError(.badRequest, "a message must be a JSON object"))
        }
        if let event = members["event"] {
            guard case .string(let name) = event else {
                return .failure(ProtocolError(.badRequest, "\"event\" must be a string"))
            }
            if name == "hello" {
                guard case .int(let version)? = members["protocol"] else {
                    return .failure(ProtocolError(.badRequest, "hello without an integer \"protocol\""))
                }
                return .success(
                    .hello(
                        Hello(
                            protocolVersion: version, version: members["version"]?.stringValue ?? "",
                            authorizationStatus: members["authorizationStatus"]?.stringValue ?? "")))
            }
            return .success(.event(name: name, fields: members))
        }
        guard let ok = members["ok"]?.boolValue else {
            return .failure(ProtocolError(.badRequest, "a message needs \"event\" or \"ok\""))
        }
        let id = members["id"].flatMap(RequestID.init(json:))
        if ok {
            return .success(.reply(id: id, result: .success(members["result"] ?? .null)))
        }
        let error = members["error"]
        let code = error?["code"]?.stringValue ?? "unknown"
        let message = error?["message"]?.stringValue ?? ""
        return .success(.reply(id: id, result: .failure(ProtocolError(ErrorCode(rawValue: code), message, id: id))))
    }
}

extension Location {
    /// Reads a wire location object; nil if latitude, longitude or mode is
    /// missing or mistyped. Mistyped optional fields are treated as unknown.
    public init?(json: JSONValue) {
        guard case .object(let members) = json, let latitude = members["latitude"]?.doubleValue,
            let longitude = members["longitude"]?.doubleValue,
            let mode = members["mode"]?.stringValue.flatMap(Mode.init(rawValue:))
        else { return nil }
        func time(_ key: String) -> FixTime? { members[key]?.stringValue.flatMap(FixTime.init(iso8601:)) }
        self.init(
            latitude: latitude, longitude: longitude, mode: mode,
            altitude: members["altitude"]?.doubleValue,
            ellipsoidalAltitude: members["ellipsoidalAltitude"]?.doubleValue,
            horizontalAccuracy: members["horizontalAccuracy"]?.doubleValue,
            verticalAccuracy: members["verticalAccuracy"]?.doubleValue,
            speed: members["speed"]?.doubleValue, speedAccuracy: members["speedAccuracy"]?.doubleValue,
            course: members["course"]?.doubleValue, courseAccuracy: members["courseAccuracy"]?.doubleValue,
            climb: members["climb"]?.doubleValue, timestamp: time("timestamp"), receivedAt: time("receivedAt"),
            device: members["device"]?.stringValue)
    }
}
