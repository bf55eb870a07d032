extension KeyPath {
    /// Longer input is rejected unread: the longest valid path is far shorter,
    /// and the text is echoed in the error message.
    public static let maximumLength = 64

    /// Parses `root` or `root.member` (DESIGN §3), case-sensitively.
    public init(parsing text: String) throws(KeyPathError) {
        guard text.utf8.count <= KeyPath.maximumLength else {
            throw KeyPathError(
                "key path longer than \(KeyPath.maximumLength) bytes (\(text.utf8.count))")
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard let rootText = parts.first, !rootText.isEmpty else {
            throw KeyPathError("empty key path")
        }
        guard let root = Root(rawValue: String(rootText)) else {
            throw KeyPathError(
                "unknown key path \"\(text)\"; known roots: "
                    + Root.allCases.map(\.rawValue).joined(separator: ", "))
        }
        switch parts.count {
        case 1:
            self.init(root)
        case 2:
            guard root == .myLocation || root == .rawLocation else {
                throw KeyPathError("\"\(root.rawValue)\" has no members (in \"\(text)\")")
            }
            guard let member = Member(rawValue: String(parts[1])) else {
                throw KeyPathError(
                    "unknown member \"\(parts[1])\" of \(root.rawValue); known: "
                        + Member.allCases.map(\.rawValue).joined(separator: ", "))
            }
            self.init(root, member: member)
        default:
            throw KeyPathError("key path \"\(text)\" has too many components (at most root.member)")
        }
    }

    /// This path's value given the current location (nil when none is known).
    /// Only meaningful for location paths; others resolve to `.null` here.
    public func value(in location: Location?) -> KeyPathValue {
        guard isLocation, let location else { return .null }
        guard let member else { return .location(location) }
        return location.value(of: member)
    }
}
