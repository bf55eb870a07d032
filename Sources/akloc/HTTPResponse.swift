/// One HTTP/1.1 response as bytes. Every response closes its connection
/// (but `/events`, which stays open): the page makes few requests, and no
/// keep-alive means no idle connections to time out.
struct HTTPResponse {
    var status: Int
    var contentType: String
    var body: [UInt8]
    var extraHeaders: [(String, String)] = []

    static let reasons: [Int: String] = [
        200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
        408: "Request Timeout", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
        502: "Bad Gateway", 503: "Service Unavailable", 505: "HTTP Version Not Supported",
    ]

    /// A plain-text error with `message`.
    static func error(_ status: Int, _ message: String) -> HTTPResponse {
        var response = HTTPResponse(
            status: status, contentType: "text/plain; charset=utf-8", body: Array((message + "\n").utf8))
        if status == 405 { response.extraHeaders.append(("Allow", "GET")) }
        return response
    }

    /// What every answer carries: nothing is cached, sniffed or framed, and
    /// the page may load only its own scripts.
    static func commonHeaders(imageSources: String) -> [(String, String)] {
        [
            ("Cache-Control", "no-store"),
            ("X-Content-Type-Options", "nosniff"),
            ("X-Frame-Options", "DENY"),
            ("Referrer-Policy", "no-referrer"),
            (
                "Content-Security-Policy",
                "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                    + "img-src 'self' data: \(imageSources); connect-src 'self'; frame-ancestors 'none'"
            ),
        ]
    }

    func bytes(imageSources: String) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reasons[status] ?? "Status")\r\n"
        head += "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        for (name, value) in Self.commonHeaders(imageSources: imageSources) + extraHeaders {
            head += "\(name): \(value)\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    /// The head of the `/events` stream, which has no length and stays open.
    static func eventStreamHead(imageSources: String) -> [UInt8] {
        var head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: keep-alive\r\n"
        for (name, value) in commonHeaders(imageSources: imageSources) { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return Array(head.utf8)
    }
}
