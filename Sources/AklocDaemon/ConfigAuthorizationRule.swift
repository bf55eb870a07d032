import AklocCore

/// What a rule in `[authorization]` grants: the config spelling is kebab-case.
public enum AuthorizationRule: String, Hashable, Sendable, CaseIterable {
    case always
    case whenInUse = "when-in-use"
    case deny

    /// Parses the config spelling; the wire protocol's `whenInUse` is accepted
    /// too, since `akloc authorize` users will have seen both.
    public init?(configValue: String) {
        switch configValue {
        case "always": self = .always
        case "when-in-use", "whenInUse": self = .whenInUse
        case "deny": self = .deny
        default: return nil
        }
    }

    /// The status a client governed by this rule has.
    public var status: AuthorizationStatus {
        switch self {
        case .always: .authorizedAlways
        case .whenInUse: .authorizedWhenInUse
        case .deny: .denied
        }
    }
}

/// Who a rule is about: a user name, or a group written `@group`.
public enum AuthorizationSubject: Hashable, Sendable, CustomStringConvertible {
    case user(String)
    case group(String)

    /// Parses `alice` or `@staff`; nil unless the name is a plausible
    /// Unix user or group name.
    public init?(_ text: String) {
        if text.hasPrefix("@") {
            let name = String(text.dropFirst())
            guard Self.isValidName(name) else { return nil }
            self = .group(name)
        } else {
            guard Self.isValidName(text) else { return nil }
            self = .user(text)
        }
    }

    public var description: String {
        switch self {
        case .user(let name): name
        case .group(let name): "@\(name)"
        }
    }

    /// The portable subset of what useradd(8) accepts (letters, digits,
    /// `.`, `_`, `-`, a trailing `$` for machine accounts, not starting with
    /// `-`), so a typo like `alice bob` or `al=ice` fails loudly.
    static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 32, bytes[0] != UInt8(ascii: "-") else { return false }
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
                continue
            case UInt8(ascii: "$") where index == bytes.count - 1 && index > 0:
                continue
            default:
                return false
            }
        }
        return true
    }
}
