import AklocCore
import AklocJSON

/// One object of a reply or event the daemon sent, read member by member
/// with its path for errors (`fix.location`, `visit.coordinate.latitude`);
/// the path `status` is the root of a status reply and is not repeated.
struct WireObject {
    let members: [String: JSONValue]
    let path: String

    init(_ value: JSONValue?, _ path: String) throws(DaemonStatus.FormatError) {
        guard case .object(let members) = value else {
            throw DaemonStatus.FormatError(member: path, problem: value == nil ? "is missing" : "is not an object")
        }
        self.members = members
        self.path = path
    }

    private func failure(_ key: String, _ problem: String) -> DaemonStatus.FormatError {
        DaemonStatus.FormatError(member: path == "status" ? key : "\(path).\(key)", problem: problem)
    }

    private func required(_ key: String) throws(DaemonStatus.FormatError) -> JSONValue {
        guard let value = members[key], value != .null else { throw failure(key, "is missing") }
        return value
    }

    func object(_ key: String) throws(DaemonStatus.FormatError) -> WireObject {
        try WireObject(try required(key), path == "status" ? key : "\(path).\(key)")
    }

    func optionalObject(_ key: String) throws(DaemonStatus.FormatError) -> WireObject? {
        guard let value = members[key], value != .null else { return nil }
        return try WireObject(value, path == "status" ? key : "\(path).\(key)")
    }

    func string(_ key: String) throws(DaemonStatus.FormatError) -> String {
        guard let text = try required(key).stringValue else { throw failure(key, "is not a string") }
        return text
    }

    func optionalString(_ key: String) throws(DaemonStatus.FormatError) -> String? {
        guard let value = members[key], value != .null else { return nil }
        guard let text = value.stringValue else { throw failure(key, "is not a string") }
        return text
    }

    func optionalStrings(_ key: String) throws(DaemonStatus.FormatError) -> [String]? {
        guard let value = members[key], value != .null else { return nil }
        guard let items = value.arrayValue else { throw failure(key, "is not an array") }
        var strings: [String] = []
        for item in items {
            guard let text = item.stringValue else { throw failure(key, "holds something other than strings") }
            strings.append(text)
        }
        return strings
    }

    func bool(_ key: String) throws(DaemonStatus.FormatError) -> Bool {
        guard let flag = try required(key).boolValue else { throw failure(key, "is not a boolean") }
        return flag
    }

    func optionalBool(_ key: String) throws(DaemonStatus.FormatError) -> Bool? {
        guard let value = members[key], value != .null else { return nil }
        guard let flag = value.boolValue else { throw failure(key, "is not a boolean") }
        return flag
    }

    func double(_ key: String) throws(DaemonStatus.FormatError) -> Double {
        guard let number = try required(key).doubleValue else { throw failure(key, "is not a number") }
        return number
    }

    func optionalDouble(_ key: String) throws(DaemonStatus.FormatError) -> Double? {
        guard let value = members[key], value != .null else { return nil }
        guard let number = value.doubleValue else { throw failure(key, "is not a number") }
        return number
    }

    func int(_ key: String) throws(DaemonStatus.FormatError) -> Int {
        guard case .int(let number) = try required(key), let value = Int(exactly: number) else {
            throw failure(key, "is not an integer")
        }
        return value
    }

    /// A counter: absent means 0 (a daemon that does not count it yet).
    func count(_ key: String) throws(DaemonStatus.FormatError) -> UInt64 {
        guard let value = members[key], value != .null else { return 0 }
        guard case .int(let number) = value, number >= 0 else { throw failure(key, "is not a count") }
        return UInt64(number)
    }

    /// An ISO 8601 time, as the daemon writes every `FixTime`.
    func time(_ key: String) throws(DaemonStatus.FormatError) -> FixTime {
        guard let time = try required(key).stringValue.flatMap(FixTime.init(iso8601:)) else {
            throw failure(key, "is not an ISO 8601 time")
        }
        return time
    }

    func optionalTime(_ key: String) throws(DaemonStatus.FormatError) -> FixTime? {
        guard let value = members[key], value != .null else { return nil }
        return try time(key)
    }

    /// A problem with the member `key` as a whole (a value out of range).
    func invalid(_ key: String, _ problem: String) -> DaemonStatus.FormatError {
        failure(key, problem)
    }
}
