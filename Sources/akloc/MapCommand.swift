import AklocCore
import AklocGeo
import AklocHTTP
import AklocJSON
import AklocPosix
import AklocProtocol
import Dispatch
import Glibc

/// `akloc map`: the position, the track and saved places on a page in the browser (docs/map.md).
struct MapCommand: Command {
    static let name = "map"
    static let abstract = "Serve a live map page (or write a snapshot) of the position, track and places"
    static let usage =
        "map [--listen ADDR:PORT] [--output FILE.html] [--open] [--since WHEN] [--day YYYY-MM-DD] "
        + "[--tiles URL-TEMPLATE|FILE.mbtiles] "
        + "[--marker-image PATH] [--place-image NAME=PATH]… [--theme light|dark|auto] [--callout-template FILE] "
        + "[--data-dir DIR] [--leaflet-dir DIR] [--request-timeout S]"
    static let details = """
        Serves the map on http://127.0.0.1:8947/ until interrupted: the track (of the last 24 h),
        saved places, and the current position with its accuracy circle, updated live. Nothing
        comes from the network: Leaflet is Debian's libjs-leaflet, the base layer is the country
        outlines of data/borders.bin over a plain sea, with the lakes, admin-1 lines and place
        labels of data/basemap.json.

        Options:
          --listen ADDR:PORT     where to serve (default 127.0.0.1:8947; [::1]:PORT for IPv6; port 0
                                 picks a free one). Another machine can reach a non-loopback address:
                                 the page shows your position, so akloc warns
          --output FILE.html     write a self-contained snapshot (opens from file://) and exit
          --open                 open the page in the user's browser (xdg-open)
          --since WHEN           the track's start (default 24h): a duration back from now (90m, 2h,
                                 3d, 45s, 1w), an ISO 8601 date or time, or epoch seconds
          --day YYYY-MM-DD       open on that day of the timeline: its visits and the trips between
                                 them (the page's day picker chooses others; a snapshot has this one)
          --tiles URL-TEMPLATE   add a tile layer, e.g. http://tiles.local/{z}/{x}/{y}.png
          --tiles FILE.mbtiles   serve the raster tiles (PNG, JPEG, WebP) of a local MBTiles file, offline
          --marker-image PATH    the position's image (PNG or SVG; default an arrow turned to the course)
          --place-image NAME=PATH  the image of saved place NAME (PNG or SVG; repeatable; default a pin)
          --theme light|dark|auto  colours (default auto: the browser's prefers-color-scheme)
          --callout-template FILE  an HTML fragment for the callout; {{title}}, {{subtitle}}, {{image}},
                                 and per annotation {{time}} {{speed}} {{course}} {{accuracy}}
                                 {{placemark}} or {{name}} {{note}} {{distance}}, HTML-escaped
          --data-dir DIR         where borders.bin and basemap.json are (default as aklocd's [geo] data-dir: PREFIX/share/akloc
                                 of akloc's own PREFIX, then /usr/share/akloc)
          --leaflet-dir DIR      Leaflet's directory (default /usr/share/javascript/leaflet)
          --request-timeout S    a request head must arrive whole within S seconds (default 10);
                                 slower clients get 408 and are closed
        """
    static let defaultListen = "127.0.0.1:8947"

    var listen: TCPListener.Address
    var listenNamed: Bool
    var output: String?
    var open: Bool
    var since: FixTime?
    var day: LocalDay?
    var tiles: String?
    var markerImage: String?
    var placeImages: [(name: String, path: String)] = []
    var theme: String
    var calloutTemplate: String?
    var dataDirectory: String?
    var leafletDirectory: String
    var requestTimeout: Double

    init(arguments: [String]) throws(CLIError) {
        // --place-image repeats; the scanner keeps one value per option, so it is taken out first.
        var rest: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            var value: String?
            if argument == "--place-image" {
                guard index < arguments.count else { throw .usage("--place-image needs NAME=PATH") }
                value = arguments[index]
                index += 1
            } else if argument.hasPrefix("--place-image=") {
                value = String(argument.dropFirst("--place-image=".count))
            } else {
                rest.append(argument)
                if argument == "--" { rest += arguments[index...] }
                if argument == "--" { break }
                continue
            }
            guard let value, let equals = value.firstIndex(of: "="), equals != value.startIndex,
                value.index(after: equals) != value.endIndex
            else { throw .usage("--place-image needs NAME=PATH, not '\(value ?? "")'") }
            placeImages.append((String(value[..<equals]), String(value[value.index(after: equals)...])))
        }
        let scanner = try ArgumentScanner(
            rest,
            options: [
                "--listen", "--output", "--since", "--day", "--tiles", "--marker-image", "--theme",
                "--callout-template", "--data-dir", "--leaflet-dir", "--request-timeout",
            ],
            flags: ["--open"])
        guard scanner.positionals.isEmpty else { throw .usage("map takes no arguments: '\(scanner.positionals[0])'") }
        let listenText = scanner.value("--listen") ?? Self.defaultListen
        guard let listen = TCPListener.Address(parsing: listenText) else {
            throw .usage("--listen needs a numeric ADDR:PORT such as 127.0.0.1:8947 or [::1]:8947, not '\(listenText)'")
        }
        self.listen = listen
        listenNamed = scanner.value("--listen") != nil
        output = scanner.value("--output")
        open = scanner.flag("--open")
        since = try TimeOption.parse(scanner.value("--since") ?? "24h", option: "--since", now: TimeOption.now())
        day = try scanner.value("--day").map { text throws(CLIError) in try LocalDay(parsing: text, option: "--day") }
        tiles = scanner.value("--tiles")
        markerImage = scanner.value("--marker-image")
        theme = scanner.value("--theme") ?? "auto"
        calloutTemplate = scanner.value("--callout-template")
        dataDirectory = scanner.value("--data-dir")
        leafletDirectory = scanner.value("--leaflet-dir") ?? MapPage.defaultLeafletDirectory
        requestTimeout = try scanner.number("--request-timeout", unit: "seconds", allowZero: false) ?? 10
    }

    func validate() throws(CLIError) {
        guard ["light", "dark", "auto"].contains(theme) else {
            throw .usage("--theme is light, dark or auto, not '\(theme)'")
        }
        if let tiles, Self.isURL(tiles) {
            guard Self.origin(of: tiles) != nil, tiles.contains("{z}"), tiles.contains("{x}"), tiles.contains("{y}")
            else {
                throw .usage("--tiles needs an http(s) URL template with {z}, {x} and {y}, not '\(tiles)'")
            }
        }
        if let tiles, tiles.isEmpty { throw .usage("--tiles needs a URL template or an MBTiles FILE") }
        if let output, output.isEmpty { throw .usage("--output needs a FILE") }
        if output != nil, open || listenNamed {
            throw .usage("--output writes a file: --open and --listen do not apply")
        }
        if !listen.isLoopback, !listenNamed { throw .usage("a non-loopback address must be named with --listen") }
    }

    /// Whether `--tiles` names a tile server (else it names an MBTiles file).
    static func isURL(_ tiles: String) -> Bool { tiles.contains("://") }

    /// `--tiles FILE.mbtiles`, opened and checked; nil for a tile server's URL.
    private func mbtiles() throws(CLIError) -> MBTiles? {
        guard let tiles, !Self.isURL(tiles) else { return nil }
        return try MBTiles.open(tiles)
    }

    /// `scheme://host[:port]` of an http(s) URL, for the page's image sources.
    static func origin(of url: String) -> String? {
        for scheme in ["http://", "https://"] where url.hasPrefix(scheme) {
            let rest = url.dropFirst(scheme.count)
            let host = rest.prefix { $0 != "/" }
            guard !host.isEmpty, !host.contains("{"), !host.contains(" ") else { return nil }
            return scheme + host
        }
        return nil
    }

    private func page(mbtiles: MBTiles?) throws(CLIError) -> MapPage {
        let leaflet = try MapPage.loadLeaflet(from: leafletDirectory)
        let marker = try markerImage.map { path throws(CLIError) in
            try MapPage.Image.load(path, option: "--marker-image")
        }
        var images: [(name: String, image: MapPage.Image)] = []
        for (name, path) in placeImages {
            images.append((name, try MapPage.Image.load(path, option: "--place-image \(name)=")))
        }
        var template: String?
        if let calloutTemplate {
            do {
                template = String(decoding: try FileReader.read(calloutTemplate, limit: 64 << 10), as: UTF8.self)
            } catch {
                throw .usage("--callout-template \(calloutTemplate): \(error.message)")
            }
        }
        return MapPage(
            leafletJS: leaflet.js, leafletCSS: leaflet.css,
            marker: marker ?? MapPage.Image(mimeType: "image/svg+xml", bytes: PackageResources.arrow_svg),
            rotateMarker: marker == nil,
            pin: MapPage.Image(mimeType: "image/svg+xml", bytes: PackageResources.pin_svg),
            placeImages: images, theme: theme,
            tiles: mbtiles.map(MapPage.TileLayer.init(serving:)) ?? tiles.map(MapPage.TileLayer.init(url:)),
            calloutTemplate: template)
    }

    /// `name` in the geo data directory, found as aklocd finds its [geo]
    /// data-dir: the first candidate that has the file.
    private func dataFile(_ name: String) -> String {
        let candidates = GeoDataDirectory.candidates(
            explicit: dataDirectory, executable: ProcessEnvironment.executablePath())
        return candidates.map { $0 + "/" + name }.first { (try? FileSystem.status($0)) != nil }
            ?? candidates[0] + "/" + name
    }

    /// The base layers (lakes, admin-1 lines, place labels), or none, saying why.
    private func basemap() -> [UInt8] {
        do {
            return try MapData.basemap(path: dataFile("basemap.json"))
        } catch {
            Output.error("akloc map: \(error.message); drawing no lakes, admin-1 lines or place labels")
            return MapData.emptyBasemap(error: error)
        }
    }

    /// The outlines, or an empty layer saying why (the map still works over the sea).
    private func countries() -> JSONValue {
        let path = dataFile("borders.bin")
        do {
            return try MapData.countries(bordersPath: path)
        } catch {
            Output.error("akloc map: \(error.message); drawing no country outlines")
            return MapData.collection([], error: error)
        }
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let mbtiles = try mbtiles()
        var page = try page(mbtiles: mbtiles)
        page.day = day?.text
        if let output {
            if let mbtiles {
                // A snapshot is one file: the tileset stays where it is, and the base map is drawn instead.
                Output.error("akloc map: the snapshot leaves out the tiles of \(mbtiles.path); it has the base map")
                page.tiles = nil
            }
            return try writeSnapshot(page, to: output, context)
        }
        return try serve(page, mbtiles: mbtiles, context)
    }

    private func writeSnapshot(_ page: MapPage, to path: String, _ context: CommandContext) throws(CLIError) -> Int32 {
        let data = MapData(socketPath: context.socketPath, since: since, placeImages: page.placeImageURLs(inline: true))
        var snapshot: [String: JSONValue] = [
            "countries": countries(), "track": data.track(), "places": data.places(),
            "createdAt": .double(TimeOption.now()),
        ]
        if let day {
            let range = day.range
            snapshot["day"] = ["date": .string(day.text), "layer": data.day(since: range.since, until: range.until)]
        }
        if let connection = try? DaemonConnection(path: context.socketPath, timeout: AklocCLI.replyTimeout),
            let location = try? connection.call(.engine(.get(AklocCore.KeyPath(.myLocation)))),
            location.objectValue != nil
        {
            snapshot["location"] = location
            if let latitude = location["latitude"]?.doubleValue, let longitude = location["longitude"]?.doubleValue,
                let result = try? connection.call(
                    .geo(.reverseGeocode(coordinate: GeoPoint(latitude: latitude, longitude: longitude))))
            {
                snapshot["placemark"] = result["placemark"]
            }
        }
        // The sky panel's value, with or without a fix; an aklocd before the key path has none to give.
        if let connection = try? DaemonConnection(path: context.socketPath, timeout: AklocCLI.replyTimeout),
            let sky = try? connection.call(.engine(.get(AklocCore.KeyPath(.satellites)))), sky.objectValue != nil
        {
            snapshot["satellites"] = sky
        }
        do {
            try AtomicFile.write(
                page.snapshotHTML(data: .object(snapshot), basemap: basemap()), to: path, mode: 0o644)
        } catch {
            throw .failure("cannot write \(path): \(error.message)")
        }
        Output.line(path)
        return ExitCode.ok
    }

    private func serve(_ page: MapPage, mbtiles: MBTiles?, _ context: CommandContext) throws(CLIError) -> Int32 {
        let listener: TCPListener
        do {
            listener = try TCPListener.listen(on: listen)
        } catch {
            throw .failure("cannot listen on \(listen): \(error.message)")
        }
        var address = listen
        if let port = try? listener.boundPort() { address.port = port }
        if !address.isLoopback {
            Output.error(
                "akloc map: warning: serving on \(address), which other machines can reach; "
                    + "anyone who can connect sees this user's position and track")
        }
        let routes = MapRoutes(
            page: page, countries: countries().jsonBytes, basemap: basemap(), tiles: mbtiles,
            data: MapData(socketPath: context.socketPath, since: since, placeImages: page.placeImageURLs(inline: false))
        )
        let box = ServerBox()
        let link = MapDaemonLink(socketPath: context.socketPath) { bytes in box.server?.broadcast(bytes) }
        var limits = HTTPServer.Limits()
        limits.headTimeout = requestTimeout
        let queue = DispatchQueue(label: "akloc.map.server")
        let server = HTTPServer(
            listener: listener, queue: queue, clock: DispatchClock(queue: queue), limits: limits,
            headers: MapRoutes.headers(imageSources: tiles.flatMap(Self.origin) ?? ""), router: routes.route,
            initialEvents: { link.currentEvents },
            acceptFailed: { error in Output.error("akloc map: accept failed (\(error)); pausing for a second") })
        box.server = server
        queue.async { server.start() }
        link.start()
        let url = "http://\(address)/"
        Output.line(url)
        if open { Self.openBrowser(url) }
        dispatchMain()
    }

    /// The link is made before the server it publishes to.
    private final class ServerBox: @unchecked Sendable {
        var server: HTTPServer?
    }

    private static func openBrowser(_ url: String) {
        do {
            try ChildProcess.spawnDetached(["xdg-open", url])
        } catch {
            Output.error("akloc map: cannot start xdg-open (\(error.message)); open \(url) yourself")
        }
    }
}
