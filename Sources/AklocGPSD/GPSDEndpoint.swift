/// Where gpsd listens: `--gpsd HOST:PORT` and `[gpsd]` in the config.
public struct GPSDEndpoint: Hashable, Sendable, CustomStringConvertible {
    public static let defaultHost = "127.0.0.1"
    public static let defaultPort: UInt16 = 2947

    public var host: String
    public var port: UInt16

    public init(host: String = GPSDEndpoint.defaultHost, port: UInt16 = GPSDEndpoint.defaultPort) {
        self.host = host
        self.port = port
    }

    /// A parse failure; `code` is stable for scripts and tests.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public enum Code: String, Hashable, Sendable {
            case empty
            case emptyHost
            case unclosedBracket
            case badPort
            case unexpectedText
        }

        public var code: Code
        public var input: String
        public var message: String

        public var description: String { "\(code.rawValue): \(message)" }
    }

    /// Parses `HOST:PORT`, `HOST`, `[IPV6]:PORT`, `[IPV6]` or a bare IPv6
    /// address (more than one colon, so it cannot carry a port). A missing
    /// port means 2947.
    public init(parsing text: String) throws(ParseError) {
        func fail(_ code: ParseError.Code, _ message: String) -> ParseError {
            ParseError(code: code, input: text, message: message)
        }
        let input = text.trimmingSpaces()
        guard !input.isEmpty else { throw fail(.empty, "empty gpsd address") }
        var host: Substring
        var portText: Substring?
        if input.hasPrefix("[") {
            guard let close = input.firstIndex(of: "]") else {
                throw fail(.unclosedBracket, "'\(text)': '[' without ']'")
            }
            host = input[input.index(after: input.startIndex)..<close]
            let rest = input[input.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else {
                    throw fail(.unexpectedText, "'\(text)': expected ':PORT' after ']'")
                }
                portText = rest.dropFirst()
            }
        } else if input.filter({ $0 == ":" }).count > 1 {
            host = Substring(input)
        } else if let colon = input.firstIndex(of: ":") {
            host = input[..<colon]
            portText = input[input.index(after: colon)...]
        } else {
            host = Substring(input)
        }
        guard !host.isEmpty else { throw fail(.emptyHost, "'\(text)': no host before the port") }
        var port = GPSDEndpoint.defaultPort
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = UInt16(portText), value != 0
            else { throw fail(.badPort, "'\(text)': port must be a number from 1 to 65535") }
            port = value
        }
        self.init(host: String(host), port: port)
    }

    /// `host:port`, with brackets around an IPv6 host.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The name the engine and clients see for this source.
    public var sourceName: String { "gpsd://\(description)" }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
