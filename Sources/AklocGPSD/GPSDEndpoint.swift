import AklocCore

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

    /// `HostPort`'s grammar, with a host required; a missing port means 2947.
    public init(parsing text: String) throws(HostPortError) {
        let parsed = try HostPort(parsing: text)
        guard !parsed.host.isEmpty else { throw HostPortError(.badHost, "'\(text)': no host before the port") }
        self.init(host: parsed.host, port: parsed.port ?? Self.defaultPort)
    }

    /// `host:port`, with brackets around an IPv6 host.
    public var description: String { HostPort(host: host, port: port).description }

    /// The name the engine and clients see for this source.
    public var sourceName: String { "gpsd://\(description)" }
}
