/// One HTTP/1.1 response as bytes. Every response closes its connection
/// (but an event stream, which stays open): a page makes few requests, and
/// no keep-alive means no idle connections to time out.
public struct HTTPResponse: Equatable, Sendable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    public var extraHeaders: [Header] = []

    /// A header line's name and value.
    public struct Header: Equatable, Sendable {
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(status: Int, contentType: String, body: [UInt8], extraHeaders: [Header] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.extraHeaders = extraHeaders
    }

    public static let reasons: [Int: String] = [
        200: "OK", 204: "No Content", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
        408: "Request Timeout", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
        502: "Bad Gateway", 503: "Service Unavailable", 505: "HTTP Version Not Supported",
    ]

    /// A plain-text error with `message`.
    public static func error(_ status: Int, _ message: String) -> HTTPResponse {
        var response = HTTPResponse(
            status: status, contentType: "text/plain; charset=utf-8", body: Array((message + "\n").utf8))
        if status == 405 { response.extraHeaders.append(Header("Allow", "GET")) }
        return response
    }

    /// The response with `common` (what the server adds to every answer) after its own headers.
    public func bytes(common: [Header]) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reasons[status] ?? "Status")\r\n"
        head += "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        for header in common + extraHeaders { head += "\(header.name): \(header.value)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    /// The head of an event stream, which has no length and stays open.
    public static func eventStreamHead(common: [Header]) -> [UInt8] {
        var head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: keep-alive\r\n"
        for header in common { head += "\(header.name): \(header.value)\r\n" }
        head += "\r\n"
        return Array(head.utf8)
    }
}
