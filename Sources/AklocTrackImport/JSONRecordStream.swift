import AklocJSON

/// A JSON document too large to hold, read a record at a time: its top
/// level is an object (Google's exports) whose members are handed out one
/// by one, and a member that is an array one element at a time. Each
/// record is cut out by its brackets and then parsed by AklocJSON's strict
/// parser, so what is accepted is exactly RFC 8259, while memory holds one
/// chunk and one record (at most `maxRecordBytes`).
struct JSONRecordStream {
    enum Item: Equatable {
        /// One element of the top-level member `key`, an array.
        case element(key: String, index: Int, value: JSONValue)
        /// A top-level member that is not an array.
        case member(key: String, value: JSONValue)
    }

    private enum State {
        case start
        /// After `{` or a member: a key or `}` next (`first`: no `,` before it).
        case members(first: Bool)
        /// Inside the array of member `key`.
        case elements(key: String, next: Int)
        case done
    }

    private var stream: ByteStream
    let maxRecordBytes: Int
    private var state = State.start

    init(stream: ByteStream, maxRecordBytes: Int) {
        self.stream = stream
        self.maxRecordBytes = maxRecordBytes
    }

    /// The next record and the offset it starts at; nil after the document.
    mutating func next() throws(TrackImportError) -> (item: Item, offset: Int)? {
        while true {
            switch state {
            case .start:
                guard let byte = try stream.skipWhitespace() else {
                    throw .at(stream.offset, .malformed, "the file is empty")
                }
                guard byte == UInt8(ascii: "{") else {
                    throw .at(stream.offset, .unknownFormat, "the JSON document is not an object")
                }
                stream.advance()
                state = .members(first: true)
            case .members(let first):
                guard let byte = try stream.skipWhitespace() else { throw truncated("an object") }
                if byte == UInt8(ascii: "}") {
                    stream.advance()
                    try finish()
                    state = .done
                    continue
                }
                if !first {
                    guard byte == UInt8(ascii: ",") else { throw expected("',' or '}' after a member") }
                    stream.advance()
                    guard try stream.skipWhitespace() != nil else { throw truncated("an object") }
                }
                let keyOffset = stream.offset
                guard try stream.peek() == UInt8(ascii: "\"") else { throw expected("a member name in quotes") }
                let (keyValue, _) = try value()
                guard case .string(let key) = keyValue else { throw .at(keyOffset, .malformed, "a bad member name") }
                guard let colon = try stream.skipWhitespace() else { throw truncated("an object") }
                guard colon == UInt8(ascii: ":") else { throw expected("':' after a member name") }
                stream.advance()
                guard let start = try stream.skipWhitespace() else { throw truncated("an object") }
                if start == UInt8(ascii: "[") {
                    stream.advance()
                    state = .elements(key: key, next: 0)
                    continue
                }
                let (member, offset) = try value()
                state = .members(first: false)
                return (.member(key: key, value: member), offset)
            case .elements(let key, let index):
                guard let byte = try stream.skipWhitespace() else { throw truncated("the array \"\(key)\"") }
                if byte == UInt8(ascii: "]") {
                    stream.advance()
                    state = .members(first: false)
                    continue
                }
                if index > 0 {
                    guard byte == UInt8(ascii: ",") else { throw expected("',' or ']' after an element of \"\(key)\"") }
                    stream.advance()
                    guard try stream.skipWhitespace() != nil else { throw truncated("the array \"\(key)\"") }
                }
                let (element, offset) = try value()
                state = .elements(key: key, next: index + 1)
                return (.element(key: key, index: index, value: element), offset)
            case .done:
                return nil
            }
        }
    }

    /// After the top-level object only whitespace may follow.
    private mutating func finish() throws(TrackImportError) {
        if try stream.skipWhitespace() != nil {
            throw .at(stream.offset, .malformed, "more data after the end of the JSON document")
        }
    }

    private func truncated(_ inside: String) -> TrackImportError {
        .at(stream.offset, .malformed, "the file ends inside \(inside) (cut off?)")
    }

    private func expected(_ what: String) -> TrackImportError {
        .at(stream.offset, .malformed, "expected \(what)")
    }

    /// Cuts out the value that starts here and parses it strictly.
    private mutating func value() throws(TrackImportError) -> (JSONValue, Int) {
        let start = stream.offset
        stream.beginCapture(limit: maxRecordBytes)
        guard let first = try stream.peek() else { throw truncated("a value") }
        switch first {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            try skipComposite(from: start)
        case UInt8(ascii: "\""):
            stream.advance()
            try skipString(from: start)
        default:
            while let byte = try stream.peek() {
                if byte == 0x2C || byte == 0x5D || byte == 0x7D || byte == 0x20 || byte == 0x0A || byte == 0x0D
                    || byte == 0x09
                {
                    break
                }
                stream.advance()
            }
        }
        let bytes = try stream.endCapture()
        switch JSONValue.parse(bytes) {
        case .success(let value): return (value, start)
        case .failure(let error): throw .at(start + error.offset, .malformed, error.message)
        }
    }

    /// To just past the bracket that closes the one at the current byte.
    private mutating func skipComposite(from start: Int) throws(TrackImportError) {
        var depth = 0
        var inString = false
        var escaped = false
        while true {
            if stream.position >= stream.buffer.count, try !stream.refill() {
                throw .at(
                    stream.offset, .malformed, "the file ends inside the value that began at byte \(start) (cut off?)")
            }
            let byte = stream.buffer[stream.position]
            stream.advance()
            if inString {
                if escaped {
                    escaped = false
                } else if byte == 0x5C {
                    escaped = true
                } else if byte == 0x22 {
                    inString = false
                }
                continue
            }
            switch byte {
            case 0x22: inString = true
            case 0x7B, 0x5B: depth += 1
            case 0x7D, 0x5D:
                depth -= 1
                if depth == 0 { return }
            default: break
            }
        }
    }

    /// To just past the closing quote (the opening one is consumed).
    private mutating func skipString(from start: Int) throws(TrackImportError) {
        var escaped = false
        while true {
            guard let byte = try stream.peek() else {
                throw .at(
                    stream.offset, .malformed, "the file ends inside the string that began at byte \(start) (cut off?)")
            }
            stream.advance()
            if escaped {
                escaped = false
            } else if byte == 0x5C {
                escaped = true
            } else if byte == 0x22 {
                return
            }
        }
    }
}
