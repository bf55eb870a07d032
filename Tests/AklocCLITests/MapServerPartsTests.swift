import Testing

@testable import akloc

/// The map's own pure parts: the Host rule, tile origins and base64. The
/// HTTP server is AklocHTTP's (Tests/AklocHTTPTests); the page is tested
/// in Chromium (Tests/Browser/test_map.py).
struct MapServerPartsTests {
    @Test func onlyAddressesAndLocalhostAreServed() {
        for host in ["127.0.0.1:8947", "127.0.0.1", "localhost:8947", "LOCALHOST", "[::1]:8947", "192.168.1.5:80"] {
            #expect(MapRoutes.isDirectHost(host), "\(host)")
        }
        for host in ["", "evil.example:8947", "127.0.0.1.evil.example", "1.2.3:80", "localhost.evil:1", "999.1.1.1"] {
            #expect(!MapRoutes.isDirectHost(host), "\(host)")
        }
    }

    @Test func tileOrigins() throws {
        #expect(MapCommand.origin(of: "https://tiles.lan:8080/{z}/{x}/{y}.png") == "https://tiles.lan:8080")
        #expect(MapCommand.origin(of: "file:///tiles/{z}") == nil)
    }

    @Test func base64() {
        #expect(Base64.encode([]) == "")
        #expect(Base64.encode(Array("f".utf8)) == "Zg==")
        #expect(Base64.encode(Array("fo".utf8)) == "Zm8=")
        #expect(Base64.encode(Array("foobar".utf8)) == "Zm9vYmFy")
        #expect(Base64.encode([0xFF, 0xFE, 0x00]) == "//4A")
    }
}
