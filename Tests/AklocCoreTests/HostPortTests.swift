import AklocCore
import Testing

/// The one host:port grammar (`--gpsd`, `[gpsd]`/`[mqtt] host`, `map --listen`).
@Suite struct HostPortTests {
    @Test(
        arguments: [
            ("127.0.0.1:2947", "127.0.0.1", 2947),
            ("localhost", "localhost", nil),
            ("gps.example:3000", "gps.example", 3000),
            ("[::1]:29470", "::1", 29470),
            ("[::1]", "::1", nil),
            ("::1", "::1", nil),
            ("fe80::1%eth0", "fe80::1%eth0", nil),
            ("  10.0.0.2:1 ", "10.0.0.2", 1),
            (":8947", "", 8947),
            ("h:65535", "h", 65535),
            ("under_score-host", "under_score-host", nil),
        ] as [(String, String, UInt16?)])
    func parses(text: String, host: String, port: UInt16?) throws {
        #expect(try HostPort(parsing: text) == HostPort(host: host, port: port))
    }

    @Test(
        arguments: [
            ("", HostPortErrorCode.empty),
            (" \t ", .empty),
            ("[]:2947", .badHost),
            ("a b:1", .badHost),
            ("host;rm", .badHost),
            ("é.example", .badHost),
            (String(repeating: "a", count: 254), .badHost),
            ("[::1:2947", .unclosedBracket),
            ("[::1]2947", .unexpectedText),
            ("host:", .badPort),
            ("host:0", .badPort),
            ("host:65536", .badPort),
            ("host:http", .badPort),
            ("host:-1", .badPort),
            ("host:+80", .badPort),
            ("host:٣", .badPort),
            ("[::1]:99999", .badPort),
        ] as [(String, HostPortErrorCode)])
    func refuses(text: String, code: HostPortErrorCode) {
        #expect {
            try HostPort(parsing: text)
        } throws: { error in
            (error as? HostPortError)?.code == code
                && (error as? HostPortError)?.description.hasSuffix("[\(code)]") == true
        }
    }

    @Test func portZeroOnlyWhenAllowed() throws {
        #expect(throws: HostPortError.self) { try HostPort(parsing: "127.0.0.1:0") }
        #expect(try HostPort(parsing: "127.0.0.1:0", allowsPortZero: true).port == 0)
    }

    @Test func printsAsItParses() throws {
        for text in ["127.0.0.1:2947", "[::1]:5", "gps.example", "::1"] {
            #expect(try HostPort(parsing: text).description == text)
        }
        #expect(HostPort(host: String(repeating: "a", count: 253)).host.count == HostPort.maxHostLength)
        #expect(HostPort.isValidHost(String(repeating: "a", count: 253)))
        #expect(!HostPort.isValidHost(""))
    }
}
