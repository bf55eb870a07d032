import AklocHTTP
import AklocJSON

/// Which answer each path of the page server gets. Only these paths exist:
/// nothing is read from the file system per request, so no path can reach
/// outside them.
struct MapRoutes: Sendable {
    private let files: [String: HTTPResponse]
    private let data: MapData

    init(page: MapPage, countries: [UInt8], basemap: [UInt8], data: MapData) {
        self.data = data
        func file(_ type: String, _ body: [UInt8]) -> HTTPResponse {
            HTTPResponse(status: 200, contentType: type, body: body)
        }
        var files: [String: HTTPResponse] = [
            "/": file("text/html; charset=utf-8", page.liveHTML()),
            "/assets/map.js": file("text/javascript; charset=utf-8", MapPage.mapJS),
            "/assets/map.css": file("text/css; charset=utf-8", MapPage.mapCSS),
            "/leaflet/leaflet.js": file("text/javascript; charset=utf-8", page.leafletJS),
            "/leaflet/leaflet.css": file("text/css; charset=utf-8", page.leafletCSS),
            "/images/marker": file(page.marker.mimeType, page.marker.bytes),
            "/images/pin": file(page.pin.mimeType, page.pin.bytes),
            "/countries.geojson": file("application/geo+json", countries),
            "/basemap.json": file("application/json", basemap),
        ]
        files["/index.html"] = files["/"]
        for (index, entry) in page.placeImages.enumerated() {
            files[MapPage.placeImagePath(index)] = file(entry.image.mimeType, entry.image.bytes)
        }
        self.files = files
    }

    func route(_ head: HTTPRequestHead) -> HTTPServer.Route {
        guard Self.isDirectHost(head.host) else {
            // A page elsewhere that re-points its own name at 127.0.0.1 (DNS
            // rebinding) would otherwise read the position: only addresses
            // and localhost are served.
            return .response(.error(403, "Host must be an IP address or localhost"))
        }
        if let file = files[head.path] { return .response(file) }
        let data = self.data
        switch head.path {
        case "/events": return .eventStream
        case "/health.json": return .health
        case "/track.geojson":
            return .deferred { complete in complete(Self.geoJSON(data.track())) }
        case "/places.geojson":
            return .deferred { complete in complete(Self.geoJSON(data.places())) }
        default:
            return .response(.error(404, "no such page"))
        }
    }

    /// What every answer carries: nothing is cached, sniffed or framed, and
    /// the page may load only its own scripts (and images from the tile
    /// server's origin, `imageSources`).
    static func headers(imageSources: String) -> [HTTPResponse.Header] {
        [
            HTTPResponse.Header("Cache-Control", "no-store"),
            HTTPResponse.Header("X-Content-Type-Options", "nosniff"),
            HTTPResponse.Header("X-Frame-Options", "DENY"),
            HTTPResponse.Header("Referrer-Policy", "no-referrer"),
            HTTPResponse.Header(
                "Content-Security-Policy",
                "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                    + "img-src 'self' data: \(imageSources); connect-src 'self'; frame-ancestors 'none'"),
        ]
    }

    private static func geoJSON(_ value: JSONValue) -> HTTPResponse {
        HTTPResponse(status: 200, contentType: "application/geo+json", body: value.jsonBytes)
    }

    /// `127.0.0.1:8947`, `[::1]:8947`, `localhost:8947`, or any address literal.
    static func isDirectHost(_ host: String) -> Bool {
        guard !host.isEmpty else { return false }
        var name = Substring(host)
        if name.hasPrefix("[") {
            return name.contains("]")
        }
        if let colon = name.lastIndex(of: ":") { name = name[..<colon] }
        if name.lowercased() == "localhost" { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }
}
