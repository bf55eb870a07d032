/// The request line and headers of one HTTP/1.x request, parsed from the
/// bytes received so far, with the server's limits: a head over
/// `maxBytes` or with more than `maxHeaders` lines is refused before it is
/// all read, so a client cannot make the server buffer without bound.
public struct HTTPRequestHead: Equatable, Sendable {
    public static let maxBytes = 8 * 1024
    public static let maxHeaders = 64

    public var method: String
    /// The path without its query string.
    public var path: String
    public var query: String
    /// The Host header's value, empty when there was none.
    public var host: String = ""

    public init(method: String, path: String, query: String, host: String = "") {
        self.method = method
        self.path = path
        self.query = query
        self.host = host
    }

    /// What the bytes so far amount to.
    public enum Parse: Equatable, Sendable {
        case incomplete
        case request(HTTPRequestHead)
        /// Answer with `status` and close.
        case refused(status: Int, reason: String)
    }

    public static func parse(_ bytes: [UInt8]) -> Parse {
        guard let end = headEnd(bytes) else {
            if bytes.count > maxBytes { return .refused(status: 431, reason: "request head over \(maxBytes) bytes") }
            if lineCount(bytes) > maxHeaders + 1 {
                return .refused(status: 431, reason: "more than \(maxHeaders) header lines")
            }
            return .incomplete
        }
        if end > maxBytes { return .refused(status: 431, reason: "request head over \(maxBytes) bytes") }
        let lines = bytes[..<end].split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            line.last == 0x0D ? line.dropLast() : line
        }
        guard let first = lines.first, !first.isEmpty else {
            return .refused(status: 400, reason: "empty request line")
        }
        if lines.count - 1 > maxHeaders + 2 {
            return .refused(status: 431, reason: "more than \(maxHeaders) header lines")
        }
        let parts = first.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, let method = ascii(parts[0]), let target = ascii(parts[1]),
            let version = ascii(parts[2]), !method.isEmpty, method.allSatisfy(\.isLetter)
        else {
            return .refused(status: 400, reason: "malformed request line")
        }
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            return .refused(status: 505, reason: "only HTTP/1.0 and HTTP/1.1")
        }
        var host = ""
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), line.first != 0x20, line.first != 0x09 else {
                return .refused(status: 400, reason: "malformed header line")
            }
            let name = String(decoding: line[..<colon], as: UTF8.self)
            if name.lowercased() == "host" {
                host = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingSpaces
            }
        }
        guard method == "GET" else { return .refused(status: 405, reason: "only GET") }
        guard target.hasPrefix("/") else { return .refused(status: 400, reason: "the target must be a path") }
        let (path, query) = splitQuery(target)
        return .request(HTTPRequestHead(method: method, path: path, query: query, host: host))
    }

    /// The value of `name` in the query string (`since=2h`), undecoded but for `+` and `%XX`.
    public func queryValue(_ name: String) -> String? {
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.first.map(String.init) == name { return parts.count == 2 ? Self.percentDecoded(parts[1]) : "" }
        }
        return nil
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(0x20)
            case UInt8(ascii: "%"):
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func splitQuery(_ target: String) -> (String, String) {
        guard let mark = target.firstIndex(of: "?") else { return (target, "") }
        return (String(target[..<mark]), String(target[target.index(after: mark)...]))
    }

    private static func ascii(_ bytes: ArraySlice<UInt8>) -> String? {
        guard bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Index just past the blank line ending the head.
    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x0A {
                if index + 1 < bytes.count, bytes[index + 1] == 0x0A { return index + 2 }
                if index + 2 < bytes.count, bytes[index + 1] == 0x0D, bytes[index + 2] == 0x0A { return index + 3 }
            }
            index += 1
        }
        return nil
    }

    private static func lineCount(_ bytes: [UInt8]) -> Int {
        bytes.reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
