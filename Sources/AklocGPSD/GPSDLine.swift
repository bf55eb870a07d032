/// Checks one line from gpsd before akloc trusts what libgps parsed from it.
///
/// libgps 3.22 never reports a JSON error: `gps_read` returns the line length
/// for garbage too, and for a truncated TPV it may already have stored the
/// fields it got (a `lon` cut short is still a finite number). So each line
/// is validated here: strict JSON, a single object, valid UTF-8, and a
/// leading `"class"` member, which is what gpsd always sends and how libgps
/// itself dispatches.
public enum GPSDLine {
    public enum Verdict: Hashable, Sendable {
        /// A well-formed gpsd object of this class (e.g. "TPV", "VERSION").
        case message(className: String)
        case invalid(reason: String)
    }

    /// Nesting deeper than this is not something gpsd sends.
    static let maximumDepth = 32

    public static func check(_ line: [UInt8]) -> Verdict {
        var end = line.count
        // gpsd ends lines with "\r\n"; libgps strips only the "\n".
        while end > 0, line[end - 1] == 0x0D || line[end - 1] == 0x20 { end -= 1 }
        let bytes = line[0..<end]
        guard !bytes.isEmpty else { return .invalid(reason: "empty line") }
        guard String(validating: bytes, as: UTF8.self) != nil else {
            return .invalid(reason: "invalid UTF-8")
        }
        var parser = Parser(bytes: bytes)
        guard parser.peek() == UInt8(ascii: "{") else { return .invalid(reason: "not a JSON object") }
        guard parser.value(depth: 0), parser.atEnd else {
            return .invalid(reason: "malformed or truncated JSON")
        }
        let prefix = Array(#"{"class":""#.utf8)
        guard bytes.starts(with: prefix) else { return .invalid(reason: "object without a leading \"class\"") }
        let nameStart = bytes.startIndex + prefix.count
        guard let quote = bytes[nameStart...].firstIndex(of: UInt8(ascii: "\"")) else {
            return .invalid(reason: "unterminated class")
        }
        return .message(className: String(decoding: bytes[nameStart..<quote], as: UTF8.self))
    }

    /// A recursive-descent JSON syntax checker (RFC 8259), no values built.
    struct Parser {
        let bytes: ArraySlice<UInt8>
        var index: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            self.index = bytes.startIndex
        }

        var atEnd: Bool { index == bytes.endIndex }

        func peek() -> UInt8? { index < bytes.endIndex ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func eat(_ byte: UInt8) -> Bool {
            guard peek() == byte else { return false }
            index += 1
            return true
        }

        mutating func value(depth: Int) -> Bool {
            guard depth < GPSDLine.maximumDepth else { return false }
            skipSpace()
            guard let byte = peek() else { return false }
            let ok: Bool
            switch byte {
            case UInt8(ascii: "{"): ok = object(depth: depth)
            case UInt8(ascii: "["): ok = array(depth: depth)
            case UInt8(ascii: "\""): ok = string()
            case UInt8(ascii: "t"): ok = literal("true")
            case UInt8(ascii: "f"): ok = literal("false")
            case UInt8(ascii: "n"): ok = literal("null")
            default: ok = number()
            }
            skipSpace()
            return ok
        }

        mutating func object(depth: Int) -> Bool {
            index += 1
            skipSpace()
            if eat(UInt8(ascii: "}")) { return true }
            while true {
                skipSpace()
                guard string() else { return false }
                skipSpace()
                guard eat(UInt8(ascii: ":")), value(depth: depth + 1) else { return false }
                if eat(UInt8(ascii: "}")) { return true }
                guard eat(UInt8(ascii: ",")) else { return false }
            }
        }

        mutating func array(depth: Int) -> Bool {
            index += 1
            skipSpace()
            if eat(UInt8(ascii: "]")) { return true }
            while true {
                guard value(depth: depth + 1) else { return false }
                if eat(UInt8(ascii: "]")) { return true }
                guard eat(UInt8(ascii: ",")) else { return false }
            }
        }

        mutating func string() -> Bool {
            guard eat(UInt8(ascii: "\"")) else { return false }
            while let byte = peek() {
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return true
                case UInt8(ascii: "\\"):
                    guard let escaped = peek() else { return false }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        for _ in 0..<4 {
                            guard let hex = peek(), isHexDigit(hex) else { return false }
                            index += 1
                        }
                    default: return false
                    }
                case 0..<0x20: return false
                default: continue
                }
            }
            return false
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let text = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            for byte in text {
                guard eat(byte) else { return false }
            }
            return true
        }

        mutating func number() -> Bool {
            _ = eat(UInt8(ascii: "-"))
            guard let first = peek(), isDigit(first) else { return false }
            index += 1
            if first != UInt8(ascii: "0") { digits() }
            if eat(UInt8(ascii: ".")) {
                guard let next = peek(), isDigit(next) else { return false }
                digits()
            }
            if eat(UInt8(ascii: "e")) || eat(UInt8(ascii: "E")) {
                if !eat(UInt8(ascii: "+")) { _ = eat(UInt8(ascii: "-")) }
                guard let next = peek(), isDigit(next) else { return false }
                digits()
            }
            return true
        }

        mutating func digits() {
            while let byte = peek(), isDigit(byte) { index += 1 }
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

        func isHexDigit(_ byte: UInt8) -> Bool {
            isDigit(byte) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
        }
    }
}
