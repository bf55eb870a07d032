/// A streaming XML reader, as much of XML 1.0 as GPX files use: elements
/// with attributes, text with the predefined and numeric character
/// references, CDATA, comments and processing instructions (skipped). It
/// checks that tags nest and close and that names and text are UTF-8; a
/// DOCTYPE is refused (no entity of a file's own is ever expanded). Memory:
/// one chunk, one token (at most `maxTokenBytes`) and the open elements.
struct XMLPullReader {
    enum Event: Equatable {
        /// A start tag, its name without a namespace prefix; `empty` for `<x/>`.
        case start(name: String, attributes: [String: String], empty: Bool)
        case end(name: String)
        /// Character data inside an element (whitespace included).
        case text(String)
    }

    private var stream: ByteStream
    let maxTokenBytes: Int
    static let maxDepth = 64
    /// Open elements, with their full names (prefix included).
    private(set) var open: [String] = []
    private var sawRoot = false
    private var pendingEnd: String?

    init(stream: ByteStream, maxTokenBytes: Int = 1 << 16) {
        self.stream = stream
        self.maxTokenBytes = maxTokenBytes
    }

    var offset: Int { stream.offset }

    /// The next event and the offset it starts at; nil after the root element closed.
    mutating func next() throws(TrackImportError) -> (event: Event, offset: Int)? {
        if let name = pendingEnd {
            pendingEnd = nil
            return (.end(name: Self.localName(name)), stream.offset)
        }
        while true {
            let start = stream.offset
            guard let byte = try stream.peek() else {
                if let innermost = open.last {
                    throw .at(start, .malformed, "the file ends inside <\(innermost)> (cut off?)")
                }
                if !sawRoot { throw .at(start, .malformed, "no XML element in the file") }
                return nil
            }
            if byte != UInt8(ascii: "<") {
                let text = try readText()
                if open.isEmpty {
                    guard text.allSatisfy({ $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }) else {
                        throw .at(start, .malformed, "text outside the root element")
                    }
                    continue
                }
                return (.text(text), start)
            }
            stream.advance()
            guard let second = try stream.peek() else { throw .at(start, .malformed, "the file ends inside a tag") }
            switch second {
            case UInt8(ascii: "?"):
                try skip(until: Array("?>".utf8), what: "a processing instruction", from: start)
            case UInt8(ascii: "!"):
                stream.advance()
                if try consume(Array("--".utf8)) {
                    try skip(until: Array("-->".utf8), what: "a comment", from: start)
                } else if try consume(Array("[CDATA[".utf8)) {
                    guard !open.isEmpty else { throw .at(start, .malformed, "CDATA outside the root element") }
                    stream.beginCapture(limit: maxTokenBytes)
                    try skip(until: Array("]]>".utf8), what: "a CDATA section", from: start)
                    let bytes = try stream.endCapture().dropLast(3)
                    return (.text(try utf8(bytes, at: start)), start)
                } else {
                    throw .at(start, .malformed, "a DOCTYPE or other declaration (not accepted in a track file)")
                }
            case UInt8(ascii: "/"):
                stream.advance()
                let name = try readName(at: start)
                guard try stream.skipWhitespace() == UInt8(ascii: ">") else {
                    throw .at(stream.offset, .malformed, "expected '>' to close </\(name)>")
                }
                stream.advance()
                guard let innermost = open.last else {
                    throw .at(start, .malformed, "</\(name)> closes no element")
                }
                guard innermost == name else {
                    throw .at(start, .malformed, "</\(name)> where </\(innermost)> was expected")
                }
                open.removeLast()
                if open.isEmpty { try finish() }
                return (.end(name: Self.localName(name)), start)
            default:
                return (try readStartTag(at: start), start)
            }
        }
    }

    /// After the root element: only whitespace, comments and processing instructions.
    private mutating func finish() throws(TrackImportError) {
        while let byte = try stream.skipWhitespace() {
            let start = stream.offset
            guard byte == UInt8(ascii: "<") else { throw .at(start, .malformed, "more data after the root element") }
            stream.advance()
            if try consume(Array("?".utf8)) {
                try skip(until: Array("?>".utf8), what: "a processing instruction", from: start)
            } else if try consume(Array("!--".utf8)) {
                try skip(until: Array("-->".utf8), what: "a comment", from: start)
            } else {
                throw .at(start, .malformed, "a second root element")
            }
        }
    }

    private mutating func readStartTag(at start: Int) throws(TrackImportError) -> Event {
        if open.isEmpty, sawRoot { throw .at(start, .malformed, "a second root element") }
        let name = try readName(at: start)
        var attributes: [String: String] = [:]
        while true {
            guard let byte = try stream.skipWhitespace() else {
                throw .at(stream.offset, .malformed, "the file ends inside <\(name)> (cut off?)")
            }
            if byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/") {
                stream.advance()
                let empty = byte == UInt8(ascii: "/")
                if empty {
                    guard try stream.peek() == UInt8(ascii: ">") else {
                        throw .at(stream.offset, .malformed, "expected '>' after '/' in <\(name)>")
                    }
                    stream.advance()
                }
                guard open.count < Self.maxDepth else {
                    throw .at(start, .tooLarge, "elements nested deeper than \(Self.maxDepth)")
                }
                sawRoot = true
                if empty {
                    if open.isEmpty { try finish() }
                    pendingEnd = name
                } else {
                    open.append(name)
                }
                return .start(name: Self.localName(name), attributes: attributes, empty: empty)
            }
            let attributeStart = stream.offset
            let attribute = try readName(at: attributeStart)
            guard try stream.skipWhitespace() == UInt8(ascii: "=") else {
                throw .at(stream.offset, .malformed, "expected '=' after the attribute \(attribute) of <\(name)>")
            }
            stream.advance()
            guard let quote = try stream.skipWhitespace(), quote == 0x22 || quote == 0x27 else {
                throw .at(stream.offset, .malformed, "the attribute \(attribute) of <\(name)> needs a quoted value")
            }
            stream.advance()
            stream.beginCapture(limit: maxTokenBytes)
            while true {
                guard let byte = try stream.peek() else {
                    throw .at(stream.offset, .malformed, "the file ends inside the attribute \(attribute) (cut off?)")
                }
                if byte == quote { break }
                guard byte != UInt8(ascii: "<") else {
                    throw .at(stream.offset, .malformed, "'<' inside the attribute \(attribute) of <\(name)>")
                }
                stream.advance()
            }
            let raw = try stream.endCapture()
            stream.advance()
            guard attributes[Self.localName(attribute)] == nil else {
                throw .at(attributeStart, .malformed, "the attribute \(attribute) twice in <\(name)>")
            }
            attributes[Self.localName(attribute)] = try decodeReferences(raw, at: attributeStart)
        }
    }

    private mutating func readName(at start: Int) throws(TrackImportError) -> String {
        stream.beginCapture(limit: 1024)
        while let byte = try stream.peek() {
            if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 || byte == UInt8(ascii: ">")
                || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=") || byte == UInt8(ascii: "<")
                || byte == 0x22 || byte == 0x27
            {
                break
            }
            stream.advance()
        }
        let bytes = try stream.endCapture()
        guard let first = bytes.first, !(0x30...0x39).contains(first), first != UInt8(ascii: "-"),
            first != UInt8(ascii: ".")
        else {
            throw .at(start, .malformed, bytes.isEmpty ? "a tag without a name" : "a name cannot start with that")
        }
        return try utf8(bytes[...], at: start)
    }

    private mutating func readText() throws(TrackImportError) -> String {
        let start = stream.offset
        stream.beginCapture(limit: maxTokenBytes)
        while let byte = try stream.peek(), byte != UInt8(ascii: "<") { stream.advance() }
        return try decodeReferences(try stream.endCapture(), at: start)
    }

    /// Consumes `bytes` when they come next; false (consuming nothing) otherwise.
    private mutating func consume(_ bytes: [UInt8]) throws(TrackImportError) -> Bool {
        // Only ever called where a mismatch is an error or a different token,
        // so a partial match may be consumed: callers check what follows.
        for (index, byte) in bytes.enumerated() {
            guard try stream.peek() == byte else {
                if index == 0 { return false }
                throw .at(stream.offset, .malformed, "a broken '<!' or '<?' construct")
            }
            stream.advance()
        }
        return true
    }

    private mutating func skip(until end: [UInt8], what: String, from start: Int) throws(TrackImportError) {
        var matched = 0
        var length = 0
        while matched < end.count {
            guard let byte = try stream.peek() else {
                throw .at(stream.offset, .malformed, "the file ends inside \(what) that began at byte \(start)")
            }
            stream.advance()
            length += 1
            guard length <= maxTokenBytes else {
                throw .at(start, .tooLarge, "\(what) of more than \(maxTokenBytes) bytes")
            }
            if byte == end[matched] {
                matched += 1
            } else {
                matched = byte == end[0] ? 1 : 0
            }
        }
    }

    private func utf8(_ bytes: ArraySlice<UInt8>, at offset: Int) throws(TrackImportError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .at(offset, .malformed, "text that is not UTF-8")
        }
        return text
    }

    /// Text with `&lt;`, `&gt;`, `&amp;`, `&quot;`, `&apos;`, `&#N;` and `&#xN;` replaced.
    private func decodeReferences(_ bytes: [UInt8], at offset: Int) throws(TrackImportError) -> String {
        guard bytes.contains(UInt8(ascii: "&")) else { return try utf8(bytes[...], at: offset) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "&") else {
                out.append(bytes[index])
                index += 1
                continue
            }
            guard let semicolon = bytes[index...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                throw .at(offset + index, .malformed, "a '&' that starts no character reference")
            }
            let name = String(decoding: bytes[(index + 1)..<semicolon], as: UTF8.self)
            let scalar: Unicode.Scalar?
            switch name {
            case "lt": scalar = "<"
            case "gt": scalar = ">"
            case "amp": scalar = "&"
            case "quot": scalar = "\""
            case "apos": scalar = "'"
            default:
                if name.hasPrefix("#x") {
                    scalar = UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
                } else if name.hasPrefix("#") {
                    scalar = UInt32(name.dropFirst(), radix: 10).flatMap(Unicode.Scalar.init)
                } else {
                    scalar = nil
                }
            }
            guard let scalar, scalar.value != 0 else {
                throw .at(offset + index, .malformed, "an unknown character reference &\(name);")
            }
            out += Array(String(scalar).utf8)
            index = semicolon + 1
        }
        return try utf8(out[...], at: offset)
    }

    static func localName(_ name: String) -> String {
        guard let colon = name.lastIndex(of: ":") else { return name }
        return String(name[name.index(after: colon)...])
    }
}
