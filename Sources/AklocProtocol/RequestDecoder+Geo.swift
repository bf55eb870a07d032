import AklocGeo
import AklocJSON

extension GeoRequest {
    /// Decodes `reverseGeocode`, `searchPlaces` or `countries`. Stricter
    /// than the other ops: an unknown member is `badRequest` too, because a
    /// misspelt `coordinate` or `near` would silently become "the current
    /// fix" (docs/protocol.md). Every error names the member at fault.
    static func decode(op: String, _ members: [String: JSONValue]) throws(ProtocolError) -> GeoRequest {
        let args = GeoArguments(members: members)
        switch op {
        case "reverseGeocode":
            try args.only(["coordinate"])
            return .reverseGeocode(coordinate: try args.point("coordinate"))
        case "searchPlaces":
            try args.only(["query", "near", "within", "limit"])
            let query = try args.query("query") { (text) throws(GeoQueryError) in try Gazetteer.checkQuery(text) }
            let near = try args.point("near")
            var within = defaultWithin
            if let value = try args.number("within") {
                guard value >= 0, value <= maximumWithin else {
                    throw ProtocolError(
                        .badRequest,
                        "\"within\" must be 0 (anywhere) to \(Int(maximumWithin)) metres, not \(JSONValue.double(value).jsonString)"
                    )
                }
                within = value
            }
            var limit = defaultLimit
            if let value = try args.number("limit") {
                guard value == value.rounded(), value >= 1, value <= Double(maximumLimit) else {
                    throw ProtocolError(
                        .badRequest,
                        "\"limit\" must be a whole number 1 to \(maximumLimit), not \(JSONValue.double(value).jsonString)"
                    )
                }
                limit = Int(value)
            }
            return .searchPlaces(query: query, near: near, within: within, limit: limit)
        case "countries":
            try args.only(["code", "phoneCode", "query", "locale"])
            let given = ["code", "phoneCode", "query"].filter { members[$0] != nil && members[$0] != .null }
            guard given.count <= 1 else {
                throw ProtocolError(
                    .badRequest,
                    "give one of \"code\", \"phoneCode\" or \"query\", not \(given.joined(separator: " and "))"
                )
            }
            var locale: String?
            if let text = try args.string("locale") {
                guard MessageCatalog.candidatePaths(locale: text) != nil else {
                    throw ProtocolError(
                        .badRequest, "\"locale\" must be a locale name such as \"de\" or \"pt_BR\", not \(shown(text))")
                }
                locale = text
            }
            let selector: CountrySelector
            if let code = try args.string("code") {
                guard (2...3).contains(code.utf8.count), code.utf8.allSatisfy(isASCIILetter) else {
                    throw ProtocolError(
                        .badRequest,
                        "\"code\" must be an ISO 3166-1 alpha-2 or alpha-3 code (2 or 3 letters), not \(shown(code))")
                }
                selector = .code(code)
            } else if let phone = try args.string("phoneCode") {
                let digits = phone.hasPrefix("+") ? phone.utf8.dropFirst() : phone.utf8[...]
                guard (1...4).contains(digits.count), digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                    digits.first != UInt8(ascii: "0")
                else {
                    throw ProtocolError(
                        .badRequest,
                        "\"phoneCode\" must be a calling code such as \"+31\" or \"31\", not \(shown(phone))")
                }
                selector = .phoneCode(phone)
            } else if members["query"] != nil, members["query"] != .null {
                selector = .query(
                    try args.query("query") { (text) throws(GeoQueryError) in try CountryTable.checkQuery(text) })
            } else {
                selector = .all
            }
            return .countries(selector, locale: locale)
        default:
            throw ProtocolError(.unknownOp, "unknown op \(shown(op))")
        }
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    static func shown(_ text: String) -> String {
        (text.count > 32 ? String(text.prefix(32)) + "…" : text).debugDescription
    }
}

/// A geo request's members, each checked for type and range.
private struct GeoArguments {
    let members: [String: JSONValue]

    /// Refuses members the op does not take (`id` and `op` aside).
    func only(_ allowed: Set<String>) throws(ProtocolError) {
        for name in members.keys.sorted() where name != "id" && name != "op" && !allowed.contains(name) {
            throw ProtocolError(
                .badRequest,
                "unknown member \(GeoRequest.shown(name)) (expected \(allowed.sorted().map { "\"\($0)\"" }.joined(separator: ", ")))"
            )
        }
    }

    func string(_ name: String) throws(ProtocolError) -> String? {
        guard let value = members[name], value != .null else { return nil }
        guard case .string(let text) = value else {
            throw ProtocolError(.badRequest, "\"\(name)\" must be a string, not \(value.typeName)")
        }
        return text
    }

    func number(_ name: String) throws(ProtocolError) -> Double? {
        guard let value = members[name], value != .null else { return nil }
        guard let number = value.doubleValue, number.isFinite else {
            throw ProtocolError(.badRequest, "\"\(name)\" must be a number, not \(value.typeName)")
        }
        return number
    }

    /// A required query, checked by the lookup's own rule (`check`).
    func query(_ name: String, _ check: (String) throws(GeoQueryError) -> String) throws(ProtocolError) -> String {
        guard let text = try string(name) else { throw ProtocolError(.badRequest, "missing \"\(name)\"") }
        _ = try ProtocolError.checking { () throws(GeoQueryError) in try check(text) }
        return text
    }

    /// `{"latitude":…,"longitude":…}`, both finite and in range, nothing else.
    func point(_ name: String) throws(ProtocolError) -> GeoPoint? {
        guard let value = members[name], value != .null else { return nil }
        guard case .object(let object) = value else {
            throw ProtocolError(
                .badRequest, "\"\(name)\" must be an object {\"latitude\":…,\"longitude\":…}, not \(value.typeName)")
        }
        for key in object.keys.sorted() where key != "latitude" && key != "longitude" {
            throw ProtocolError(
                .badRequest, "unknown member \(GeoRequest.shown(key)) of \"\(name)\" (expected latitude, longitude)")
        }
        func degrees(_ key: String, _ limit: Double) throws(ProtocolError) -> Double {
            guard let member = object[key] else { throw ProtocolError(.badRequest, "missing \"\(name).\(key)\"") }
            guard let number = member.doubleValue, number.isFinite else {
                throw ProtocolError(.badRequest, "\"\(name).\(key)\" must be a number, not \(member.typeName)")
            }
            guard abs(number) <= limit else {
                throw ProtocolError(
                    .badRequest,
                    "\"\(name).\(key)\" must be within ±\(Int(limit)) degrees, not \(JSONValue.double(number).jsonString)"
                )
            }
            return number
        }
        return GeoPoint(latitude: try degrees("latitude", 90), longitude: try degrees("longitude", 180))
    }
}
