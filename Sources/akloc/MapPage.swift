import AklocJSON
import AklocPosix

/// The map page: index.html, map.js and map.css (Sources/akloc/MapPage,
/// compiled into the binary), Leaflet from Debian's libjs-leaflet, and the
/// images. `liveHTML` links to the server's routes; `snapshotHTML` inlines
/// everything, data included, so the file opens from file://.
struct MapPage {
    /// An image the page draws, with its MIME type.
    struct Image {
        var mimeType: String
        var bytes: [UInt8]

        var dataURI: String { "data:\(mimeType);base64,\(Base64.encode(bytes))" }

        /// A PNG or SVG file, told by its content (not its name).
        static func load(_ path: String, option: String) throws(CLIError) -> Image {
            let bytes: [UInt8]
            do {
                bytes = try FileReader.read(path, limit: 4 << 20)
            } catch {
                throw .usage("\(option) \(path): \(error.message)")
            }
            if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
                return Image(mimeType: "image/png", bytes: bytes)
            }
            let head = String(decoding: bytes.prefix(4096), as: UTF8.self)
            if head.contains("<svg") { return Image(mimeType: "image/svg+xml", bytes: bytes) }
            throw .usage("\(option) \(path): not a PNG or SVG image")
        }
    }

    /// The page's tile layer: a tile server's URL template, or the server's
    /// own /tiles/ route for an MBTiles file, with what its metadata says.
    struct TileLayer {
        var url: String
        var options: [String: JSONValue] = [:]

        init(url: String) { self.url = url }

        init(serving mbtiles: MBTiles) {
            let metadata = mbtiles.metadata
            url = MapRoutes.tilePrefix + "{z}/{x}/{y}"
            // Past maxzoom Leaflet scales up the deepest tiles rather than asking for ones the file has not.
            options = ["minNativeZoom": .int(Int64(metadata.minZoom)), "maxNativeZoom": .int(Int64(metadata.maxZoom))]
            if let bounds = metadata.bounds {
                options["bounds"] = [
                    [.double(bounds[1]), .double(bounds[0])], [.double(bounds[3]), .double(bounds[2])],
                ]
            }
        }
    }

    static let defaultLeafletDirectory = "/usr/share/javascript/leaflet"

    var leafletJS: [UInt8]
    var leafletCSS: [UInt8]
    var marker: Image
    /// Whether the marker is the default arrow, turned to the course.
    var rotateMarker: Bool
    var pin: Image
    /// Place name → its image (`--place-image`), in the order given.
    var placeImages: [(name: String, image: Image)]
    var theme: String
    var tiles: TileLayer?
    var calloutTemplate: String?
    /// `--day`: the timeline day the page opens on (YYYY-MM-DD), in the browser's own time zone.
    var day: String? = nil

    static var mapJS: [UInt8] { PackageResources.map_js }
    static var mapCSS: [UInt8] { PackageResources.map_css }

    /// Leaflet's script and style sheet from `directory`, or a clear error naming the package.
    static func loadLeaflet(from directory: String) throws(CLIError) -> (js: [UInt8], css: [UInt8]) {
        do {
            return (
                try FileReader.read(directory + "/leaflet.js", limit: 8 << 20),
                try FileReader.read(directory + "/leaflet.css", limit: 1 << 20)
            )
        } catch {
            throw .failure(
                "Leaflet is not in \(directory) (\(error.message)): install Debian's libjs-leaflet "
                    + "(apt install libjs-leaflet), or name its directory with --leaflet-dir")
        }
    }

    /// The route of place image `index` on the live page.
    static func placeImagePath(_ index: Int) -> String { "/images/place/\(index)" }

    private func config(images: [String: JSONValue], snapshot: JSONValue?) -> [UInt8] {
        var object: [String: JSONValue] = [
            "theme": .string(theme), "images": .object(images), "rotateMarker": .bool(rotateMarker),
        ]
        if let tiles {
            object["tiles"] = .string(tiles.url)
            if !tiles.options.isEmpty { object["tileOptions"] = .object(tiles.options) }
        }
        if let calloutTemplate { object["calloutTemplate"] = .string(calloutTemplate) }
        if let day { object["day"] = .string(day) }
        if let snapshot { object["snapshot"] = snapshot }
        return JSONValue.object(object).jsonBytes
    }

    private static func fill(styles: [UInt8], scripts: [UInt8]) -> [UInt8] {
        let template = String(decoding: PackageResources.index_html, as: UTF8.self)
        let parts = template.split(separator: "<!--akloc:styles-->", maxSplits: 1)
        let rest = parts[1].split(separator: "<!--akloc:scripts-->", maxSplits: 1)
        return Array(parts[0].utf8) + styles + Array(rest[0].utf8) + scripts + Array(rest[1].utf8)
    }

    private static func configScript(_ config: [UInt8]) -> [UInt8] {
        jsonScript(id: "akloc-config", config)
    }

    /// JSON in a script element: "<" as \u003c (JSON allows it), so no "</script>" in a string ends it.
    private static func jsonScript(id: String, _ json: [UInt8]) -> [UInt8] {
        var bytes = Array("<script id=\"\(id)\" type=\"application/json\">".utf8)
        bytes.reserveCapacity(json.count + 64)
        for byte in json {
            if byte == UInt8(ascii: "<") { bytes += Array("\\u003c".utf8) } else { bytes.append(byte) }
        }
        return bytes + Array("</script>\n".utf8)
    }

    /// The page the server gives at `/`.
    func liveHTML() -> [UInt8] {
        let images: [String: JSONValue] = ["marker": "/images/marker", "pin": "/images/pin"]
        let styles = Array(
            "<link rel=\"stylesheet\" href=\"/leaflet/leaflet.css\">\n<link rel=\"stylesheet\" href=\"/assets/map.css\">\n"
                .utf8)
        let scripts =
            Self.configScript(config(images: images, snapshot: nil))
            + Array("<script src=\"/leaflet/leaflet.js\"></script>\n<script src=\"/assets/map.js\"></script>\n".utf8)
        return Self.fill(styles: styles, scripts: scripts)
    }

    /// The self-contained file of `--output`; `data` holds the layers and the
    /// position, `basemap` the base layers as /basemap.json serves them (a
    /// script element of its own: it is already JSON, and large).
    func snapshotHTML(data: JSONValue, basemap: [UInt8]) -> [UInt8] {
        let images: [String: JSONValue] = [
            "marker": .string(marker.dataURI), "pin": .string(pin.dataURI),
        ]
        let styles = Array("<style>\n".utf8) + leafletCSS + Self.mapCSS + Array("</style>\n".utf8)
        let scripts =
            Self.configScript(config(images: images, snapshot: data))
            + Self.jsonScript(id: "akloc-basemap", basemap)
            + Array("<script>\n".utf8) + leafletJS + Array("\n</script>\n<script>\n".utf8) + Self.mapJS
            + Array("\n</script>\n".utf8)
        return Self.fill(styles: styles, scripts: scripts)
    }

    /// The images' URLs by place name: routes on the live page, data URIs in a snapshot.
    func placeImageURLs(inline: Bool) -> [String: String] {
        var urls: [String: String] = [:]
        for (index, entry) in placeImages.enumerated() {
            urls[entry.name] = inline ? entry.image.dataURI : Self.placeImagePath(index)
        }
        return urls
    }
}

/// RFC 4648 base64, for the snapshot's data URIs.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { output.append(alphabet[Int(value >> UInt32(shift)) & 63]) }
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            var value = UInt32(bytes[index]) << 16
            if rest == 2 { value |= UInt32(bytes[index + 1]) << 8 }
            output.append(alphabet[Int(value >> 18) & 63])
            output.append(alphabet[Int(value >> 12) & 63])
            output.append(rest == 2 ? alphabet[Int(value >> 6) & 63] : UInt8(ascii: "="))
            output.append(UInt8(ascii: "="))
        }
        return String(decoding: output, as: UTF8.self)
    }
}
