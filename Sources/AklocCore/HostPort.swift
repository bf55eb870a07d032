/// A host and an optional port, as akloc's options and config name them:
/// `HOST`, `HOST:PORT`, `[IPV6]`, `[IPV6]:PORT`, a bare IPv6 address (more
/// than one colon, so it cannot carry a port) or `:PORT` (no host: the
/// user's default). The one grammar of `aklocd --gpsd`, the config's
/// `[gpsd] host` and `[mqtt] host`, and `akloc map --listen`; each user adds
/// its own rule on top (gpsd needs a host, `--listen` a numeric one and a port).
public struct HostPort: Hashable, Sendable, CustomStringConvertible {
    /// Empty when the text named only a port.
    public var host: String
    public var port: UInt16?

    /// A DNS name's longest text form.
    public static let maxHostLength = 253

    public init(host: String, port: UInt16? = nil) {
        self.host = host
        self.port = port
    }

    /// Parses the grammar above; spaces and tabs around the text are
    /// dropped. Port 0 ("any free port") is accepted only with `allowsPortZero`.
    public init(parsing text: String, allowsPortZero: Bool = false) throws(HostPortError) {
        func fail(_ code: HostPortErrorCode, _ problem: String) -> HostPortError {
            HostPortError(code, "'\(text)': \(problem)")
        }
        var input = Substring(text)
        while let first = input.first, first == " " || first == "\t" { input = input.dropFirst() }
        while let last = input.last, last == " " || last == "\t" { input = input.dropLast() }
        guard !input.isEmpty else { throw HostPortError(.empty, "no host or port given") }
        var host: Substring
        var portText: Substring?
        if input.hasPrefix("[") {
            guard let close = input.firstIndex(of: "]") else { throw fail(.unclosedBracket, "'[' without ']'") }
            host = input[input.index(after: input.startIndex)..<close]
            let rest = input[input.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw fail(.unexpectedText, "expected ':PORT' after ']'") }
                portText = rest.dropFirst()
            }
            guard !host.isEmpty else { throw fail(.badHost, "no address between '[' and ']'") }
        } else if input.filter({ $0 == ":" }).count > 1 {
            host = input
        } else if let colon = input.firstIndex(of: ":") {
            host = input[..<colon]
            portText = input[input.index(after: colon)...]
        } else {
            host = input
        }
        guard host.isEmpty || Self.isValidHost(host) else {
            throw fail(
                .badHost,
                "a host is a name or an IP address: at most \(Self.maxHostLength) letters, digits and . - _ : %")
        }
        if let portText {
            let lowest: UInt16 = allowsPortZero ? 0 : 1
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = UInt16(portText), value >= lowest
            else { throw fail(.badPort, "the port must be a number from \(lowest) to 65535") }
            self.init(host: String(host), port: value)
        } else {
            self.init(host: String(host), port: nil)
        }
    }

    /// A host name, an IPv4 or an IPv6 address (with a `%zone`), as gpsd's
    /// own clients take them; the config's `host` keys take exactly this.
    public static func isValidHost(_ host: some StringProtocol) -> Bool {
        !host.isEmpty && host.utf8.count <= maxHostLength
            && host.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"),
                    UInt8(ascii: ":"), UInt8(ascii: "%"):
                    true
                default: false
                }
            }
    }

    /// `host:port`, `[v6]:port`, or the host alone.
    public var description: String {
        guard let port else { return host }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

/// Why a `HOST:PORT` text was refused.
public typealias HostPortError = CodedError<HostPortErrorCode>

/// The stable codes of `HostPortError`.
public enum HostPortErrorCode: String, CodedErrorCode {
    case empty
    /// No host where one is needed, or one with characters no host has.
    case badHost
    case unclosedBracket
    case badPort
    /// Text after `]` that is not `:PORT`.
    case unexpectedText
}
