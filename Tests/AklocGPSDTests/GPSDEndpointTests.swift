import AklocCore
import AklocGPSD
import Testing

@Suite struct GPSDEndpointTests {
    @Test(
        arguments: [
            ("127.0.0.1:2947", "127.0.0.1", 2947),
            ("localhost", "localhost", 2947),
            ("gps.example:3000", "gps.example", 3000),
            ("[::1]:29470", "::1", 29470),
            ("[::1]", "::1", 2947),
            ("::1", "::1", 2947),
            ("fe80::1%eth0", "fe80::1%eth0", 2947),
            ("  10.0.0.2:1 ", "10.0.0.2", 1),
            ("h:65535", "h", 65535),
        ] as [(String, String, UInt16)])
    func parses(text: String, host: String, port: UInt16) throws {
        let endpoint = try GPSDEndpoint(parsing: text)
        #expect(endpoint == GPSDEndpoint(host: host, port: port))
    }

    @Test(
        arguments: [
            ("", HostPortErrorCode.empty),
            ("   ", .empty),
            (":2947", .badHost),
            ("[]:2947", .badHost),
            ("gps host:2947", .badHost),
            ("gps/host", .badHost),
            (String(repeating: "a", count: 254), .badHost),
            ("[::1:2947", .unclosedBracket),
            ("[::1]2947", .unexpectedText),
            ("host:", .badPort),
            ("host:0", .badPort),
            ("host:65536", .badPort),
            ("host:http", .badPort),
            ("host:-1", .badPort),
            ("host:+80", .badPort),
            ("[::1]:99999", .badPort),
        ] as [(String, HostPortErrorCode)])
    func rejects(text: String, code: HostPortErrorCode) {
        #expect {
            try GPSDEndpoint(parsing: text)
        } throws: { error in
            (error as? HostPortError)?.code == code
        }
    }

    @Test func describesAndNames() {
        #expect(GPSDEndpoint().description == "127.0.0.1:2947")
        #expect(GPSDEndpoint(host: "::1", port: 5).description == "[::1]:5")
        #expect(GPSDEndpoint().sourceName == "gpsd://127.0.0.1:2947")
    }
}
