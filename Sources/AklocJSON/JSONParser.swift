/// Why a line is not acceptable JSON.
public struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    /// Byte offset in the input where the problem was found.
    public var offset: Int

    public var description: String { "\(message) at byte \(offset)" }
}

extension JSONValue {
    /// The deepest nesting of arrays and objects `parse` accepts. Requests
    /// need 3 levels; the limit keeps hostile input (10 000 `[`) from
    /// exhausting the stack.
    public static let defaultMaxDepth = 32

    /// Parses one complete JSON text (RFC 8259), strictly: no trailing
    /// commas, no comments, no NaN, valid UTF-8 only, nothing after the value
    /// but whitespace. Never recurses deeper than `maxDepth`.
    public static func parse<Bytes: Collection<UInt8>>(
        _ bytes: Bytes, maxDepth: Int = defaultMaxDepth
    ) -> Result<JSONValue, JSONParseError> {
        if let result = bytes.withContiguousStorageIfAvailable({ buffer in
            parse(buffer: buffer, maxDepth: maxDepth)
        }) {
            return result
        }
        return Array(bytes).withUnsafeBufferPointer { parse(buffer: $0, maxDepth: maxDepth) }
    }

    /// Checks one complete JSON text exactly as strictly as `parse` does
    /// (the same texts pass, with the same errors), without building values:
    /// no arrays, dictionaries or strings are allocated but the first member
    /// of a top-level object. For a reader that trusts another parser's
    /// values once the text is known to be well formed (gpsd's lines, which
    /// libgps parses), or dispatches on a leading tag.
    ///
    /// Inlinable so a caller's bytes type is specialized where it calls:
    /// unspecialized, finding the contiguous storage of a slice through
    /// witness tables cost three times the validation itself (issue 19,
    /// gpsd's TPV lines).
    ///
    /// `firstMember: false` leaves the outline's `firstKey` and
    /// `firstString` nil, making no String at all, for a caller that has
    /// read them from the bytes already.
    @inlinable
    public static func validate<Bytes: Collection<UInt8>>(
        _ bytes: Bytes, maxDepth: Int = defaultMaxDepth, firstMember: Bool = true
    ) -> Result<JSONOutline, JSONParseError> {
        if let result = bytes.withContiguousStorageIfAvailable({ buffer in
            validate(buffer: buffer, maxDepth: maxDepth, firstMember: firstMember)
        }) {
            return result
        }
        return Array(bytes).withUnsafeBufferPointer {
            validate(buffer: $0, maxDepth: maxDepth, firstMember: firstMember)
        }
    }

    static func parse(buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int) -> Result<JSONValue, JSONParseError> {
        var parser = JSONParser(input: buffer, maxDepth: maxDepth, building: true)
        return parser.parseText()
    }

    @usableFromInline
    static func validate(
        buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int, firstMember: Bool = true
    ) -> Result<JSONOutline, JSONParseError> {
        // Outside strings a non-ASCII byte is an error anyway, and escapes
        // only produce valid scalars, so checking the whole text once is
        // the same test as `parse`'s per-string one, without the strings.
        if let offset = firstInvalidUTF8(in: buffer) {
            // Rare, so the building parser finds the error `parse` reports.
            if case .failure(let error) = parse(buffer: buffer, maxDepth: maxDepth) { return .failure(error) }
            return .failure(JSONParseError(message: "invalid UTF-8", offset: offset))
        }
        var parser = JSONParser(input: buffer, maxDepth: maxDepth, building: false)
        parser.keepsFirstMember = firstMember
        let result = parser.parseText()
        return result.map { JSONOutline(kind: .init($0), firstKey: parser.firstKey, firstString: parser.firstString) }
    }
}

/// What `JSONValue.validate` found out about a text without building it.
public struct JSONOutline: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        case null, bool, number, string, array, object

        init(_ value: JSONValue) {
            switch value {
            case .null: self = .null
            case .bool: self = .bool
            case .int, .double: self = .number
            case .string: self = .string
            case .array: self = .array
            case .object: self = .object
            }
        }
    }

    /// The top-level value's type.
    public var kind: Kind
    /// The key of a top-level object's first member (gpsd's `"class"`).
    public var firstKey: String?
    /// That member's value, when it is a string.
    public var firstString: String?

    public init(kind: Kind, firstKey: String? = nil, firstString: String? = nil) {
        self.kind = kind
        self.firstKey = firstKey
        self.firstString = firstString
    }
}

/// The offset of the first byte that does not start a valid UTF-8 scalar
/// (overlong forms, surrogates and values past U+10FFFF are invalid), or nil.
func firstInvalidUTF8(in buffer: UnsafeBufferPointer<UInt8>) -> Int? {
    var offset = 0
    // ASCII runs need no decoder.
    while offset < buffer.count, buffer[offset] < 0x80 { offset += 1 }
    guard offset < buffer.count else { return nil }
    var iterator = UnsafeBufferPointer(rebasing: buffer[offset...]).makeIterator()
    var decoder = Unicode.UTF8.ForwardParser()
    while true {
        switch decoder.parseScalar(from: &iterator) {
        case .valid(let scalar): offset += scalar.count
        case .emptyInput: return nil
        case .error: return offset
        }
    }
}

private struct JSONParser {
    let input: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    /// False when validating: containers stay empty, strings are checked but not made.
    let building: Bool
    var index = 0
    var firstKey: String?
    var firstString: String?
    /// When validating: whether to make `firstKey` and `firstString`.
    var keepsFirstMember = true

    init(input: UnsafeBufferPointer<UInt8>, maxDepth: Int, building: Bool) {
        self.input = input
        self.maxDepth = maxDepth
        self.building = building
    }

    mutating func parseText() -> Result<JSONValue, JSONParseError> {
        do throws(JSONParseError) {
            skipWhitespace()
            let value = try parseValue(depth: 0)
            skipWhitespace()
            guard index == input.count else { throw error("unexpected data after the JSON value") }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    func error(_ message: String) -> JSONParseError {
        JSONParseError(message: message, offset: index)
    }

    var atEnd: Bool { index >= input.count }

    mutating func skipWhitespace() {
        while index < input.count {
            switch input[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard !atEnd else { throw error("unexpected end of input") }
        switch input[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString(keeping: building))
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        case 0x80...0xFF:
            throw error("unexpected non-ASCII byte outside a string")
        default:
            throw error("unexpected character")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard input.count - index >= count else { throw error("unexpected end of input") }
        let start = literal.utf8Start
        for offset in 0..<count where input[index + offset] != start[offset] {
            throw error("invalid literal")
        }
        index += count
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
        index += 1
        var members = [String: JSONValue]()
        skipWhitespace()
        if !atEnd, input[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard !atEnd else { throw error("unexpected end of input") }
            guard input[index] == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let isFirstOfTop = !building && keepsFirstMember && depth == 1 && firstKey == nil
            let key = try parseString(keeping: building || isFirstOfTop)
            skipWhitespace()
            guard !atEnd, input[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            if isFirstOfTop {
                firstKey = key
                if !atEnd, input[index] == UInt8(ascii: "\"") {
                    firstString = try parseString(keeping: true)
                } else {
                    _ = try parseValue(depth: depth)
                }
            } else if building {
                members[key] = try parseValue(depth: depth)
            } else {
                _ = try parseValue(depth: depth)
            }
            skipWhitespace()
            guard !atEnd else { throw error("unexpected end of input") }
            switch input[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default: throw error("expected ',' or '}'")
            }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth) levels") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if !atEnd, input[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            let element = try parseValue(depth: depth)
            if building { elements.append(element) }
            skipWhitespace()
            guard !atEnd else { throw error("unexpected end of input") }
            switch input[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default: throw error("expected ',' or ']'")
            }
        }
    }

    /// A string literal; "" when not `keeping` (validated, not made).
    mutating func parseString(keeping: Bool) throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes.
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "\""), !keeping {
                index += 1
                return ""
            }
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: input[start..<index])
                // Checked by our own scan, then decoded: the standard
                // library's generic `String(validating:as:)` cost most of a
                // validation of a whole gpsd line for its two short strings.
                guard firstInvalidUTF8(in: slice) == nil else {
                    index = start
                    throw error("invalid UTF-8 in string")
                }
                index += 1
                return String(decoding: slice, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("unescaped control character in string") }
            index += 1
        }
        guard index < input.count else { throw error("unterminated string") }
        // Slow path with escapes.
        var bytes = keeping ? Array(UnsafeBufferPointer(rebasing: input[start..<index])) : []
        while index < input.count {
            let byte = input[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard keeping else { return "" }
                guard let text = String(validating: bytes, as: UTF8.self) else {
                    throw error("invalid UTF-8 in string")
                }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard !atEnd else { throw error("unterminated string") }
                let escape = input[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): if keeping { bytes.append(0x22) }
                case UInt8(ascii: "\\"): if keeping { bytes.append(0x5C) }
                case UInt8(ascii: "/"): if keeping { bytes.append(0x2F) }
                case UInt8(ascii: "b"): if keeping { bytes.append(0x08) }
                case UInt8(ascii: "f"): if keeping { bytes.append(0x0C) }
                case UInt8(ascii: "n"): if keeping { bytes.append(0x0A) }
                case UInt8(ascii: "r"): if keeping { bytes.append(0x0D) }
                case UInt8(ascii: "t"): if keeping { bytes.append(0x09) }
                case UInt8(ascii: "u"):
                    var scalar = UInt32(try parseHex4())
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard input.count - index >= 6, input[index] == UInt8(ascii: "\\"),
                            input[index + 1] == UInt8(ascii: "u")
                        else { throw error("unpaired surrogate escape") }
                        index += 2
                        let low = UInt32(try parseHex4())
                        guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw error("unpaired surrogate escape")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                    if keeping { bytes.append(contentsOf: UTF8.encode(unicode)!) }
                default:
                    index -= 1
                    throw error("invalid escape")
                }
            default:
                if byte < 0x20 { throw error("unescaped control character in string") }
                if keeping { bytes.append(byte) }
                index += 1
            }
        }
        throw error("unterminated string")
    }

    mutating func parseHex4() throws(JSONParseError) -> UInt16 {
        guard input.count - index >= 4 else { throw error("unterminated \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = input[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid \\u escape")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        var integral = true
        if input[index] == UInt8(ascii: "-") { index += 1 }
        guard !atEnd, isDigit(input[index]) else { throw error("invalid number") }
        if input[index] == UInt8(ascii: "0") {
            index += 1
            if !atEnd, isDigit(input[index]) { throw error("leading zero in number") }
        } else {
            while !atEnd, isDigit(input[index]) { index += 1 }
        }
        if !atEnd, input[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard !atEnd, isDigit(input[index]) else { throw error("invalid number") }
            while !atEnd, isDigit(input[index]) { index += 1 }
        }
        var hasExponent = false
        if !atEnd, input[index] == UInt8(ascii: "e") || input[index] == UInt8(ascii: "E") {
            integral = false
            hasExponent = true
            index += 1
            if !atEnd, input[index] == UInt8(ascii: "+") || input[index] == UInt8(ascii: "-") { index += 1 }
            guard !atEnd, isDigit(input[index]) else { throw error("invalid number") }
            while !atEnd, isDigit(input[index]) { index += 1 }
        }
        // Only an exponent or more than 308 digits can leave Double's range,
        // so a validator need not make the number otherwise.
        if !building, !hasExponent, index - start < 300 { return .int(0) }
        // The literal is ASCII by construction.
        let text = String(decoding: UnsafeBufferPointer(rebasing: input[start..<index]), as: UTF8.self)
        if integral, let exact = Int64(text) { return .int(exact) }
        guard let value = Double(text), value.isFinite else {
            index = start
            throw error("number out of range")
        }
        return .double(value)
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
