import AklocJSON

/// Checks one line from gpsd before akloc trusts what libgps parsed from it.
///
/// libgps 3.22 never reports a JSON error: `gps_read` returns the line length
/// for garbage too, and for a truncated TPV it may already have stored the
/// fields it got (a `lon` cut short is still a finite number). libgps's own
/// parse and its `set` mask therefore do not suffice, and each line is checked
/// once more, but only checked: `JSONValue.validate` (the project's one JSON
/// parser, AklocJSON) runs without building a value, so libgps stays the only
/// one that reads the fields. A line passes when it is strict JSON, valid
/// UTF-8, one object, with a leading `"class"` string member, which is what
/// gpsd always sends and how libgps itself dispatches.
public enum GPSDLine {
    public enum Verdict: Hashable, Sendable {
        /// A well-formed gpsd object of this class (e.g. "TPV", "VERSION").
        case message(className: String)
        case invalid(reason: String)
    }

    /// Nesting deeper than this is not something gpsd sends.
    static let maximumDepth = 32

    public static func check<Bytes: BidirectionalCollection<UInt8>>(_ line: Bytes) -> Verdict {
        check(line, leadingClass: nil)
    }

    /// `check` of a line whose opening bytes name its class
    /// (`leadingClassBytes` found `leadingClass`): the same verdict, but the
    /// validation makes no String (a valid line that opens with
    /// `{"class":"TPV"` is an object whose first member is that class).
    static func check<Bytes: BidirectionalCollection<UInt8>>(_ line: Bytes, leadingClass: String?) -> Verdict {
        var bytes = line[...]
        // gpsd ends lines with "\r\n"; libgps strips only the "\n".
        while let last = bytes.last, last == 0x0D || last == 0x20 { bytes = bytes.dropLast() }
        guard !bytes.isEmpty else { return .invalid(reason: "empty line") }
        switch JSONValue.validate(bytes, maxDepth: maximumDepth, firstMember: leadingClass == nil) {
        case .failure(let error):
            if error.message.contains("UTF-8") { return .invalid(reason: "invalid UTF-8") }
            return .invalid(reason: "malformed or truncated JSON: \(error)")
        case .success(let outline):
            guard outline.kind == .object else { return .invalid(reason: "not a JSON object") }
            if let leadingClass { return .message(className: leadingClass) }
            guard outline.firstKey == "class", let name = outline.firstString else {
                return .invalid(reason: "object without a leading \"class\"")
            }
            return .message(className: name)
        }
    }

    /// The class a line says it is, from its opening bytes alone
    /// (`{"class":"SKY",…`), without checking the rest; nil when the line
    /// does not start the way gpsd's objects do.
    public static func leadingClass<Bytes: Collection<UInt8>>(_ line: Bytes) -> String? {
        leadingClassBytes(line).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `leadingClass` as the line's own bytes, so the source can compare
    /// it with the classes it reads without making a String per line.
    static func leadingClassBytes<Bytes: Collection<UInt8>>(_ line: Bytes) -> Bytes.SubSequence? {
        // A literal, not a stored array: a global's lazy initialisation is
        // checked on every access, and this runs for every line.
        let prefix: StaticString = #"{"class":""#
        let classPrefix = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        guard line.starts(with: classPrefix) else { return nil }
        let name = line.dropFirst(classPrefix.count).prefix { byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
        }
        guard !name.isEmpty, name.count <= 16 else { return nil }
        let rest = line.dropFirst(classPrefix.count + name.count)
        guard rest.first == 0x22 else { return nil }
        return name
    }

    /// Whether `name` (a line's class, from `leadingClassBytes`) is `literal`.
    static func isClass<Name: Collection<UInt8>>(_ name: Name, _ literal: StaticString) -> Bool {
        name.elementsEqual(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }
}
