import AklocCore
import AklocHTTP
import AklocJSON
import AklocProtocol

/// Which answer each path of the page server gets. Only these paths exist:
/// nothing is read from the file system per request, so no path can reach
/// outside them.
struct MapRoutes: Sendable {
    private let files: [String: HTTPResponse]
    private let data: MapData
    private let tiles: MBTiles?
    /// Where the tiles of `--tiles FILE.mbtiles` are: `/tiles/Z/X/Y`, rows from the north (XYZ).
    static let tilePrefix = "/tiles/"

    init(page: MapPage, countries: [UInt8], basemap: [UInt8], tiles: MBTiles? = nil, data: MapData) {
        self.data = data
        self.tiles = tiles
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
        if let tiles, head.path.hasPrefix(Self.tilePrefix) {
            guard let (zoom, column, row) = Self.tileAddress(head.path) else {
                return .response(.error(404, "no such tile"))
            }
            // SQLite reads off the server's queue, as aklocd's answers are.
            return .deferred { complete in complete(Self.tile(tiles, zoom: zoom, column: column, row: row)) }
        }
        let data = self.data
        switch head.path {
        case "/events": return .eventStream
        case "/health.json": return .health
        case "/track.geojson":
            return .deferred { complete in complete(Self.geoJSON(data.track())) }
        case "/places.geojson":
            return .deferred { complete in complete(Self.geoJSON(data.places())) }
        case "/day.geojson":
            switch Self.dayRange(head) {
            case .failure(let problem): return .response(.error(400, problem.message))
            case .success(let range):
                return .deferred { complete in complete(Self.geoJSON(data.day(since: range.since, until: range.until)))
                }
            }
        default:
            return .response(.error(404, "no such page"))
        }
    }

    /// The longest day `/day.geojson` serves: a calendar day is 23 to 25
    /// hours; the rest of the track is a longer range's, for `akloc timeline`.
    static let maxDaySeconds: Int64 = 48 * 3600

    struct BadQuery: Error, Equatable {
        var message: String
    }

    /// `since` and `until` of `/day.geojson?since=S&until=U`: whole epoch
    /// seconds (the page sends its own local midnights), `since` before
    /// `until`, at most `maxDaySeconds` apart.
    static func dayRange(_ head: HTTPRequestHead) -> Result<(since: FixTime, until: FixTime), BadQuery> {
        func seconds(_ name: String) -> Result<Int64, BadQuery> {
            guard let text = head.queryValue(name) else { return .failure(BadQuery(message: "\(name) is missing")) }
            guard !text.isEmpty, text.count <= 12, text.allSatisfy({ ("0"..."9").contains($0) }),
                let value = Int64(text), value <= TrackTime.maxSeconds
            else {
                return .failure(
                    BadQuery(message: "\(name) must be whole epoch seconds, not '\(text.prefix(40))'"))
            }
            return .success(value)
        }
        return seconds("since").flatMap { since in
            seconds("until").flatMap { until in
                guard since < until else { return .failure(BadQuery(message: "since must be before until")) }
                guard until - since <= maxDaySeconds else {
                    return .failure(BadQuery(message: "until is more than \(maxDaySeconds / 3600) h after since"))
                }
                return .success((FixTime(secondsSince1970: since), FixTime(secondsSince1970: until)))
            }
        }
    }

    /// `/tiles/Z/X/Y` as numbers on the map (decimal digits only), or nil.
    static func tileAddress(_ path: String) -> (zoom: Int, column: Int, row: Int)? {
        guard path.hasPrefix(tilePrefix) else { return nil }
        let parts = path.dropFirst(tilePrefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3,
            parts.allSatisfy({ !$0.isEmpty && $0.count <= 10 && $0.allSatisfy { ("0"..."9").contains($0) } })
        else { return nil }
        let numbers = parts.compactMap { Int($0) }
        guard numbers.count == 3, MBTiles.isValid(zoom: numbers[0], column: numbers[1], row: numbers[2]) else {
            return nil
        }
        return (numbers[0], numbers[1], numbers[2])
    }

    /// A tile, or 204 where the file has none: an empty answer is no error
    /// (a tileset of one region has no tiles elsewhere), and Leaflet leaves the square blank.
    private static func tile(_ tiles: MBTiles, zoom: Int, column: Int, row: Int) -> HTTPResponse {
        do throws(CLIError) {
            guard let bytes = try tiles.tile(zoom: zoom, column: column, row: row) else {
                return HTTPResponse(status: 204, contentType: tiles.metadata.mimeType, body: [])
            }
            return HTTPResponse(status: 200, contentType: tiles.metadata.mimeType, body: bytes)
        } catch {
            return .error(500, error.message)
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
