import AklocCore
import AklocJSON

extension ClientRequest {
    /// Decodes one request line (without its newline).
    ///
    /// - Invalid JSON or UTF-8, or nesting deeper than 32 levels: `badJSON`.
    /// - Not an object, a mistyped `id`, a missing or non-string `op`, a
    ///   missing, mistyped or out-of-range argument: `badRequest`.
    /// - An op this daemon does not know: `unknownOp`; a key path it does not
    ///   know: `unknownKeyPath`.
    /// - Members the op does not use are ignored (forward compatibility).
    ///
    /// The error carries the request's `id` whenever the line was a JSON
    /// object with a valid `id`, so the error reply can echo it.
    ///
    /// A `policy` object may leave members out: it decodes to a
    /// `ThrottlePolicy.Partial`, which the engine completes from the
    /// subscriber's default policy (and validates as a whole).
    public static func decode<Bytes: Collection<UInt8>>(_ line: Bytes) -> Result<ClientRequest, ProtocolError> {
        let json: JSONValue
        switch JSONValue.parse(line) {
        case .success(let value): json = value
        case .failure(let error): return .failure(ProtocolError(.badJSON, "invalid JSON: \(error)"))
        }
        return decode(json: json)
    }

    /// Decodes an already parsed request object (see `decode(_:)`).
    public static func decode(json: JSONValue) -> Result<ClientRequest, ProtocolError> {
        guard case .object(let members) = json else {
            return .failure(ProtocolError(.badRequest, "a request must be a JSON object, not \(json.typeName)"))
        }
        var id: RequestID?
        switch members["id"] {
        case nil, .null?: id = nil
        case let value?:
            guard let valid = RequestID(json: value) else {
                return .failure(
                    ProtocolError(.badRequest, "\"id\" must be a number or a string, not \(value.typeName)"))
            }
            id = valid
        }
        do {
            let operation = try decodeOperation(RequestArguments(members))
            return .success(ClientRequest(id: id, operation: operation))
        } catch {
            var error = error
            error.id = id
            return .failure(error)
        }
    }

    private static func decodeOperation(_ args: RequestArguments) throws(ProtocolError) -> Operation {
        guard let opValue = args.members["op"] else { throw ProtocolError(.badRequest, "missing \"op\"") }
        guard case .string(let op) = opValue else {
            throw ProtocolError(.badRequest, "\"op\" must be a string, not \(opValue.typeName)")
        }
        switch op {
        case "startUpdatingLocation":
            return .engine(
                .startUpdatingLocation(
                    policy: try args.policy("policy", required: false),
                    everyEpoch: try args.bool("everyEpoch") ?? false))
        case "stopUpdatingLocation":
            return .engine(.stopUpdatingLocation)
        case "startMonitoringVisits":
            return .engine(.startMonitoringVisits)
        case "stopMonitoringVisits":
            return .engine(.stopMonitoringVisits)
        case "observe":
            let keyPath = try args.keyPath()
            var initial = false
            var old = false
            if let options = args.members["options"], options != .null {
                guard case .array(let list) = options else {
                    throw ProtocolError(.badRequest, "\"options\" must be an array of strings, not \(options.typeName)")
                }
                for option in list {
                    switch option {
                    case "initial": initial = true
                    case "old": old = true
                    default:
                        throw ProtocolError(
                            .badRequest, "unknown observe option \(option.jsonString) (expected \"initial\" or \"old\")"
                        )
                    }
                }
            }
            let policy = try args.policy("policy", required: false)
            return .engine(.observe(keyPath, initial: initial, old: old, policy: policy))
        case "unobserve":
            return .engine(.unobserve(try args.keyPath()))
        case "get":
            return .engine(.get(try args.keyPath()))
        case "requestLocation":
            var timeout = defaultRequestLocationTimeout
            if let value = args.members["timeout"], value != .null {
                guard let seconds = value.doubleValue else {
                    throw ProtocolError(.badRequest, "\"timeout\" must be a number of seconds, not \(value.typeName)")
                }
                guard seconds > 0, seconds <= maxRequestLocationTimeout else {
                    throw ProtocolError(
                        .badRequest,
                        "\"timeout\" must be more than 0 and at most \(Int(maxRequestLocationTimeout)) seconds")
                }
                timeout = seconds
            }
            return .engine(.requestLocation(timeout: timeout))
        case "requestAuthorization":
            let type = try args.string("type", required: true)!
            guard let request = AuthorizationRequestType(rawValue: type) else {
                throw ProtocolError(.badRequest, "\"type\" must be \"whenInUse\" or \"always\"")
            }
            return .engine(.requestAuthorization(request))
        case "configure":
            return .engine(.configure(try args.policy("policy", required: true)!))
        case "status":
            return .status
        case "pause":
            return .engine(.pause)
        case "resume":
            return .engine(.resume)
        case "reload":
            return .reload
        case "track":
            return .track(try decodeTrack(args.members))
        case "clearTrack":
            return .clearTrack(before: try decodeClearTrack(args.members))
        case "importTrack":
            return .importTrack(try decodeTrackImport(args.members))
        case "authorize":
            let subject = try args.string("subject", required: true)!
            guard isValidSubject(subject) else {
                throw ProtocolError(
                    .badRequest, "\"subject\" must be a user name or @group (letters, digits, '_', '.', '-')")
            }
            let status = try args.string("status", required: true)!
            guard let rule = AuthorizationRule(wire: status) else {
                throw ProtocolError(.badRequest, "\"status\" must be \"always\", \"whenInUse\" or \"deny\"")
            }
            return .authorize(subject: subject, rule: rule)
        case "visits":
            return .visits(try decodeTimeline(args.members))
        case "trips":
            return .trips(try decodeTimeline(args.members))
        case "reverseGeocode", "searchPlaces", "countries":
            return .geo(try GeoRequest.decode(op: op, args.members))
        case _ where PlacesRequest.operationNames.contains(op):
            return .places(try PlacesRequest.decode(op: op, members: args.members))
        default:
            let shown = op.count > 64 ? String(op.prefix(64)) + "…" : op
            throw ProtocolError(.unknownOp, "unknown op \"\(shown)\"")
        }
    }

    /// A user name or `@group`: 1–64 of `[A-Za-z0-9_.-]` (a trailing `$` is
    /// allowed, as for Samba machine accounts), not starting with `-` or `.`.
    public static func isValidSubject(_ subject: String) -> Bool {
        var name = Substring(subject)
        if name.hasPrefix("@") { name = name.dropFirst() }
        if name.hasSuffix("$") { name = name.dropLast() }
        guard (1...64).contains(name.utf8.count), let first = name.utf8.first,
            first != UInt8(ascii: "-"), first != UInt8(ascii: ".")
        else { return false }
        return name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
                true
            default: false
            }
        }
    }
}

/// Typed access to a request's members, throwing `badRequest` on a mistyped one.
struct RequestArguments {
    let members: [String: JSONValue]

    init(_ members: [String: JSONValue]) { self.members = members }

    func string(_ name: String, required: Bool) throws(ProtocolError) -> String? {
        guard let value = members[name], value != .null else {
            if required { throw ProtocolError(.badRequest, "missing \"\(name)\"") }
            return nil
        }
        guard case .string(let text) = value else {
            throw ProtocolError(.badRequest, "\"\(name)\" must be a string, not \(value.typeName)")
        }
        return text
    }

    func bool(_ name: String) throws(ProtocolError) -> Bool? {
        guard let value = members[name], value != .null else { return nil }
        guard case .bool(let flag) = value else {
            throw ProtocolError(.badRequest, "\"\(name)\" must be true or false, not \(value.typeName)")
        }
        return flag
    }

    func keyPath() throws(ProtocolError) -> KeyPath {
        let text = try string("keyPath", required: true)!
        do {
            return try KeyPath(parsing: text)
        } catch {
            throw ProtocolError(.unknownKeyPath, error.message)
        }
    }

    func policy(_ name: String, required: Bool) throws(ProtocolError) -> ThrottlePolicy.Partial? {
        guard let value = members[name], value != .null else {
            if required { throw ProtocolError(.badRequest, "missing \"\(name)\"") }
            return nil
        }
        return try decodeWirePolicy(value)
    }
}

/// Decodes a wire policy object into the members it gives. An unknown member
/// is an error (a typo must not silently fall back to a default); each value
/// given must be valid on its own (finite, not negative, in range), and
/// `minInterval` ≤ `maxInterval` when both are given. Whether it is valid
/// with the members it leaves out is the engine's to say, which knows them.
public func decodeWirePolicy(_ value: JSONValue) throws(ProtocolError) -> ThrottlePolicy.Partial {
    guard case .object(let members) = value else {
        throw ProtocolError(.badRequest, "\"policy\" must be an object, not \(value.typeName)")
    }
    var policy = ThrottlePolicy.Partial()
    for (name, member) in members.sorted(by: { $0.key < $1.key }) {
        guard let number = member.doubleValue else {
            throw ProtocolError(.badRequest, "policy \"\(name)\" must be a number, not \(member.typeName)")
        }
        switch name {
        case "updateSpeed":
            policy.updateSpeed = number
        case "minInterval":
            policy.minInterval = number
        case "maxInterval":
            policy.maxInterval = number
        case "distanceFilter":
            policy.distanceFilter = number
        case "desiredAccuracy":
            policy.desiredAccuracy = number
        default:
            let shown = name.count > 64 ? String(name.prefix(64)) + "…" : name
            throw ProtocolError(
                .badRequest,
                "unknown policy member \"\(shown)\" (expected updateSpeed, minInterval, maxInterval, "
                    + "distanceFilter, desiredAccuracy)")
        }
    }
    do {
        try policy.validate()
    } catch {
        throw ProtocolError(.badRequest, "policy: \(error.message)")
    }
    return policy
}
