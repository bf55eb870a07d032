/// A small, fast JSON writer appending UTF-8 to a byte array. Used for every
/// server message on the hot path (one encode per event, fanned out to every
/// subscriber), where it is several times faster than `JSONEncoder`.
public struct JSONWriter: Sendable {
    public var bytes: [UInt8]

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inline(__always) public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    @inline(__always) public mutating func byte(_ value: UInt8) {
        bytes.append(value)
    }

    /// A JSON string literal with correct escaping (quotes, backslash and
    /// every control character).
    public mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
                if runStart < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
                runStart = index + 1
                switch byte {
                case 0x22: raw("\\\"")
                case 0x5C: raw("\\\\")
                case 0x0A: raw("\\n")
                case 0x0D: raw("\\r")
                case 0x09: raw("\\t")
                case 0x08: raw("\\b")
                case 0x0C: raw("\\f")
                default:
                    raw("\\u00")
                    bytes.append(hexDigit(byte >> 4))
                    bytes.append(hexDigit(byte & 0x0F))
                }
            }
            if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The shortest text that reads back as the same Double (Swift's
    /// `description`: `5.0`, `0.1`, `1e-07`), so a double stays a double
    /// (never mistaken for an integer id); `null` for NaN and infinities,
    /// which JSON cannot carry.
    public mutating func number(_ value: Double) {
        guard value.isFinite else {
            raw("null")
            return
        }
        var text = value.description
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    public mutating func integer(_ value: Int64) {
        if value >= 0, value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        var text = String(value)
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    public mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// `"key":` (the key is escaped).
    public mutating func key(_ key: String) {
        string(key)
        bytes.append(UInt8(ascii: ":"))
    }

    /// `"key":` for a known-safe ASCII key without escaping.
    @inline(__always) public mutating func key(_ key: StaticString) {
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let flag): bool(flag)
        case .int(let integer): self.integer(integer)
        case .double(let double): number(double)
        case .string(let text): string(text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                self.value(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, name) in members.keys.sorted().enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                key(name)
                self.value(members[name]!)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }
}

extension JSONWriter {
    /// `value` indented by two spaces a level, keys sorted, `"key" : value`
    /// (as `JSONEncoder`'s pretty printing): for files people read and edit.
    public mutating func prettyValue(_ value: JSONValue, indent: Int = 0) {
        func newline(_ level: Int) {
            bytes.append(0x0A)
            bytes.append(contentsOf: repeatElement(0x20, count: 2 * level))
        }
        switch value {
        case .array(let elements) where !elements.isEmpty:
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                prettyValue(element, indent: indent + 1)
            }
            newline(indent)
            bytes.append(UInt8(ascii: "]"))
        case .object(let members) where !members.isEmpty:
            bytes.append(UInt8(ascii: "{"))
            for (index, name) in members.keys.sorted().enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                string(name)
                raw(" : ")
                prettyValue(members[name]!, indent: indent + 1)
            }
            newline(indent)
            bytes.append(UInt8(ascii: "}"))
        default:
            self.value(value)
        }
    }
}

@inline(__always) private func hexDigit(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
}
