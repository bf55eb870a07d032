import AklocHTTP
import Testing

/// The request head parser and its limits: what a client sends before the
/// blank line, complete, partial, malformed and oversize.
struct HTTPRequestHeadTests {
    static func parse(_ text: String) -> HTTPRequestHead.Parse { HTTPRequestHead.parse(Array(text.utf8)) }

    @Test func aGetWithHostAndQuery() {
        guard
            case .request(let head) = Self.parse(
                "GET /track.geojson?since=2h&x=a%20b+c HTTP/1.1\r\nHost: 127.0.0.1:8947\r\n\r\n")
        else {
            Issue.record("not parsed")
            return
        }
        #expect(head.method == "GET")
        #expect(head.path == "/track.geojson")
        #expect(head.host == "127.0.0.1:8947")
        #expect(head.queryValue("since") == "2h")
        #expect(head.queryValue("x") == "a b c")
        #expect(head.queryValue("none") == nil)
        // Bare LF line ends too, and HTTP/1.0.
        guard case .request = Self.parse("GET / HTTP/1.0\nhost: x\n\n") else {
            Issue.record("LF-only head refused")
            return
        }
    }

    @Test func partialHeadsWait() {
        for text in [
            "", "GET", "GET / HTTP/1.1\r\n", "GET / HTTP/1.1\r\nHost: a\r\n", "GET / HTTP/1.1\r\nHost: a\r\n\r",
        ] {
            #expect(Self.parse(text) == .incomplete, "\(text.debugDescription)")
        }
    }

    @Test func badHeadsAreRefusedWithTheirStatus() {
        let cases: [(String, Int)] = [
            ("POST / HTTP/1.1\r\n\r\n", 405),
            ("DELETE /x HTTP/1.1\r\n\r\n", 405),
            ("GET / HTTP/2.0\r\n\r\n", 505),
            ("GET / HTTP/1.1 extra\r\n\r\n", 400),
            ("GET http://evil/ HTTP/1.1\r\n\r\n", 400),
            ("GET /\u{7F} HTTP/1.1\r\n\r\n", 400),
            ("\r\n\r\n", 400),
            ("G3T / HTTP/1.1\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nno colon\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\n folded: x\r\n\r\n", 400),
            ("\u{16}\u{03}\u{01}\u{02}\r\n\r\n", 400),
        ]
        for (text, status) in cases {
            guard case .refused(let got, _) = Self.parse(text) else {
                Issue.record("\(text.debugDescription) not refused")
                continue
            }
            #expect(got == status, "\(text.debugDescription)")
        }
    }

    @Test func oversizeHeadsAreRefusedBeforeTheyEnd() {
        // Over the byte limit with no end in sight: refused at once, not buffered on.
        let long = "GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: HTTPRequestHead.maxBytes)
        guard case .refused(431, _) = Self.parse(long) else {
            Issue.record("long head not refused")
            return
        }
        let many = "GET / HTTP/1.1\r\n" + String(repeating: "X: y\r\n", count: HTTPRequestHead.maxHeaders + 2)
        guard case .refused(431, _) = Self.parse(many) else {
            Issue.record("many headers not refused")
            return
        }
        let allowed = "GET / HTTP/1.1\r\n" + String(repeating: "X: y\r\n", count: HTTPRequestHead.maxHeaders) + "\r\n"
        guard case .request = Self.parse(allowed) else {
            Issue.record("\(HTTPRequestHead.maxHeaders) headers refused")
            return
        }
    }
}
