import AklocHTTP
import CSQLite
import Foundation
import Testing

@testable import akloc

/// `akloc map --tiles FILE.mbtiles`: MBTiles files this test writes with
/// SQLite (as any MBTiles tool would), read back through MBTiles and the
/// page server's /tiles/ route; bad files are refused with the file and the
/// problem named. The tiles drawn in Chromium: Tests/Browser/test_map.py.
struct MBTilesTests {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 0x4A, 0x46, 0x49, 0x46]
    static let webp: [UInt8] = Array("RIFF".utf8) + [26, 0, 0, 0] + Array("WEBPVP8 ".utf8)
    static let gzip: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0]

    struct Tile {
        var zoom: Int
        var column: Int
        /// TMS: row 0 is the south.
        var tmsRow: Int
        var bytes: [UInt8]
    }

    /// A new MBTiles file: `schema` (SQL run first), the metadata rows and the tiles.
    static func write(
        schema: String = "CREATE TABLE metadata (name text, value text);"
            + "CREATE TABLE tiles (zoom_level integer, tile_column integer, tile_row integer, tile_data blob);"
            + "CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);",
        metadata: [(String, String)] = [("name", "test"), ("format", "png")],
        tiles: [Tile] = [Tile(zoom: 1, column: 0, tmsRow: 1, bytes: png + [1])]
    ) throws -> String {
        let path = temporaryPath()
        var database: OpaquePointer?
        try #require(sqlite3_open(path, &database) == SQLITE_OK)
        defer { sqlite3_close(database) }
        try #require(sqlite3_exec(database, schema, nil, nil, nil) == SQLITE_OK)
        for (name, value) in metadata {
            try execute(database!, "INSERT INTO metadata VALUES (?1, ?2)") { statement in
                sqlite3_bind_text(statement, 1, name, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
                sqlite3_bind_text(statement, 2, value, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            }
        }
        for tile in tiles {
            try execute(database!, "INSERT INTO tiles VALUES (?1, ?2, ?3, ?4)") { statement in
                sqlite3_bind_int64(statement, 1, Int64(tile.zoom))
                sqlite3_bind_int64(statement, 2, Int64(tile.column))
                sqlite3_bind_int64(statement, 3, Int64(tile.tmsRow))
                _ = tile.bytes.withUnsafeBytes { buffer in
                    sqlite3_bind_blob(
                        statement, 4, buffer.baseAddress, Int32(buffer.count),
                        unsafeBitCast(-1, to: sqlite3_destructor_type.self))
                }
            }
        }
        return path
    }

    private static func execute(
        _ database: OpaquePointer, _ sql: String, bind: (OpaquePointer) -> Void
    ) throws {
        var statement: OpaquePointer?
        try #require(sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK)
        defer { sqlite3_finalize(statement) }
        bind(statement!)
        try #require(sqlite3_step(statement) == SQLITE_DONE)
    }

    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("akloc-\(UUID().uuidString).mbtiles").path
    }

    /// The message `MBTiles.open` refuses `path` with, or nil when it opens.
    static func refusal(_ path: String) -> String? {
        do {
            _ = try MBTiles.open(path)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func aTilesetIsReadWithItsRowsFlipped() throws {
        let tiles = [
            Tile(zoom: 1, column: 0, tmsRow: 1, bytes: Self.png + [1]),  // XYZ row 0: the north-west
            Tile(zoom: 1, column: 1, tmsRow: 0, bytes: Self.png + [2]),  // XYZ row 1: the south-east
            Tile(zoom: 3, column: 4, tmsRow: 5, bytes: Self.png + [3]),  // XYZ row 2
        ]
        let path = try Self.write(
            metadata: [
                ("name", "Connecticut River"), ("format", "png"), ("bounds", "-72.5,43.5,-71.0,45.0"),
                ("attribution", "test tiles"),
            ],
            tiles: tiles)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let mbtiles = try MBTiles.open(path)
        #expect(
            mbtiles.metadata
                == MBTiles.Metadata(
                    name: "Connecticut River", format: "png", minZoom: 1, maxZoom: 3,
                    bounds: [-72.5, 43.5, -71.0, 45.0],
                    attribution: "test tiles"))
        #expect(mbtiles.metadata.mimeType == "image/png")
        #expect(try mbtiles.tile(zoom: 1, column: 0, row: 0) == Self.png + [1])
        #expect(try mbtiles.tile(zoom: 1, column: 1, row: 1) == Self.png + [2])
        #expect(try mbtiles.tile(zoom: 3, column: 4, row: 2) == Self.png + [3])
        // None there, and addresses off the map.
        #expect(try mbtiles.tile(zoom: 1, column: 0, row: 1) == nil)
        #expect(try mbtiles.tile(zoom: 2, column: 0, row: 0) == nil)
        #expect(try mbtiles.tile(zoom: 1, column: 2, row: 0) == nil)
        #expect(try mbtiles.tile(zoom: -1, column: 0, row: 0) == nil)
        #expect(try mbtiles.tile(zoom: 31, column: 0, row: 0) == nil)
    }

    @Test func zoomsComeFromTheMetadataOrTheTilesAndTheFormatFromTheTiles() throws {
        // No format row (MBTiles 1.0) and no zooms: the tiles say.
        let path = try Self.write(
            metadata: [("name", "old")],
            tiles: [
                Tile(zoom: 2, column: 0, tmsRow: 0, bytes: Self.jpeg),
                Tile(zoom: 5, column: 0, tmsRow: 0, bytes: Self.jpeg),
            ])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let old = try MBTiles.open(path).metadata
        #expect((old.format, old.mimeType, old.minZoom, old.maxZoom) == ("jpg", "image/jpeg", 2, 5))
        #expect(old.bounds == nil)
        let webp = try Self.write(
            metadata: [("format", "image/webp"), ("minzoom", "0"), ("maxzoom", "14"), ("bounds", "garbage")],
            tiles: [Tile(zoom: 0, column: 0, tmsRow: 0, bytes: Self.webp)])
        defer { try? FileManager.default.removeItem(atPath: webp) }
        let metadata = try MBTiles.open(webp).metadata
        #expect(
            (metadata.format, metadata.mimeType, metadata.minZoom, metadata.maxZoom) == ("webp", "image/webp", 0, 14))
        #expect(metadata.bounds == nil)
    }

    @Test func aBadFileIsRefusedNamingTheFileAndTheProblem() throws {
        var paths: [String] = []
        defer { for path in paths { try? FileManager.default.removeItem(atPath: path) } }
        func file(_ bytes: [UInt8]) throws -> String {
            let path = Self.temporaryPath()
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            paths.append(path)
            return path
        }
        func mbtiles(
            schema: String? = nil, metadata: [(String, String)] = [("name", "t"), ("format", "png")],
            tiles: [Tile] = [Tile(zoom: 0, column: 0, tmsRow: 0, bytes: Self.png)]
        ) throws -> String {
            let path =
                try schema.map { try Self.write(schema: $0, metadata: metadata, tiles: tiles) }
                ?? Self.write(metadata: metadata, tiles: tiles)
            paths.append(path)
            return path
        }
        let good = try mbtiles()
        let whole = try [UInt8](Data(contentsOf: URL(fileURLWithPath: good)))
        let metadataOnly = "CREATE TABLE metadata (name text, value text);"
        let tilesOnly =
            "CREATE TABLE tiles (zoom_level integer, tile_column integer, tile_row integer, tile_data blob);"
        let cases: [(path: String, problem: String)] = [
            ("/nonexistent/akloc/region.mbtiles", "no such file"),
            (FileManager.default.temporaryDirectory.path, "not a regular file"),
            (
                try file(Array("garbage, not a database at all, but long enough to have a header".utf8)),
                "not an SQLite database"
            ),
            (try file(Self.png + [UInt8](repeating: 0, count: 200)), "not an SQLite database"),
            (try file(Array(whole.prefix(100))), "malformed"),  // the header, and no schema after it
            (try file(Array(whole.prefix(whole.count / 2))), "malformed"),
            (try file([]), "it has no metadata table"),
            (try mbtiles(schema: tilesOnly, metadata: []), "it has no metadata table"),
            (try mbtiles(schema: metadataOnly, tiles: []), "it has no tiles table"),
            (
                try mbtiles(
                    schema: metadataOnly + "CREATE TABLE tiles (z integer, x integer, y integer, data blob);", tiles: []
                ),
                "no such column"
            ),
            (try mbtiles(tiles: []), "its tiles table holds no tiles"),
            (
                try mbtiles(
                    metadata: [("format", "pbf")], tiles: [Tile(zoom: 0, column: 0, tmsRow: 0, bytes: Self.gzip)]),
                "vector tiles (format pbf)"
            ),
            (try mbtiles(metadata: [("format", "tiff")]), "format 'tiff' is not a raster tile format"),
            (
                try mbtiles(
                    metadata: [("format", "png")], tiles: [Tile(zoom: 0, column: 0, tmsRow: 0, bytes: Self.jpeg)]),
                "its metadata says format png, but a tile is jpg"
            ),
            (
                try mbtiles(
                    metadata: [("format", "png")], tiles: [Tile(zoom: 0, column: 0, tmsRow: 0, bytes: [1, 2, 3])]),
                "but a tile is not an image"
            ),
            (
                try mbtiles(metadata: [], tiles: [Tile(zoom: 0, column: 0, tmsRow: 0, bytes: Self.gzip)]),
                "no format and its tiles are not PNG, JPEG or WebP"
            ),
            (try mbtiles(metadata: [("format", "png"), ("minzoom", "5"), ("maxzoom", "2")]), "zoom levels"),
            (try mbtiles(metadata: [("format", "png"), ("maxzoom", "99")]), "zoom levels"),
        ]
        for (path, problem) in cases {
            let message = Self.refusal(path)
            #expect(message?.hasPrefix("--tiles \(path): ") == true, "\(path): \(String(describing: message))")
            #expect(message?.contains(problem) == true, "\(problem): \(String(describing: message))")
        }
    }

    @Test func tileAddresses() {
        #expect(MapRoutes.tileAddress("/tiles/0/0/0")! == (0, 0, 0))
        #expect(MapRoutes.tileAddress("/tiles/12/1234/2047")! == (12, 1234, 2047))
        for path in [
            "/tiles/", "/tiles/1/2", "/tiles/1/2/3/4", "/tiles/1/0/2", "/tiles/-1/0/0", "/tiles/1/+0/0",
            "/tiles/1/0/0.png",
            "/tiles/31/0/0", "/tiles/99999999999/0/0", "/tiles/a/b/c", "/tiles//0/0", "/tiles/1/0/", "/tile/1/0/0",
            "/tiles/1/0x1/0", "/tiles/1/1 /0",
        ] {
            #expect(MapRoutes.tileAddress(path) == nil, "\(path)")
        }
        #expect(MBTiles.tmsRow(zoom: 0, row: 0) == 0)
        #expect(MBTiles.tmsRow(zoom: 3, row: 2) == 5)
        #expect(MBTiles.tmsRow(zoom: 3, row: MBTiles.tmsRow(zoom: 3, row: 6)) == 6)
    }

    @Test func thePageServerAnswersTilesAndNoTile() async throws {
        let path = try Self.write(tiles: [Tile(zoom: 1, column: 1, tmsRow: 1, bytes: Self.png + [7])])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let routes = MapRoutes(
            page: MapPage(
                leafletJS: [], leafletCSS: [], marker: MapPage.Image(mimeType: "image/svg+xml", bytes: []),
                rotateMarker: true, pin: MapPage.Image(mimeType: "image/svg+xml", bytes: []), placeImages: [],
                theme: "auto", tiles: nil, calloutTemplate: nil),
            countries: [], basemap: [], tiles: try MBTiles.open(path),
            data: MapData(socketPath: "/nonexistent", since: nil, placeImages: [:]))
        func answer(_ target: String) async -> HTTPResponse? {
            switch routes.route(HTTPRequestHead(method: "GET", path: target, query: "", host: "127.0.0.1:8947")) {
            case .response(let response): return response
            case .deferred(let body):
                return await withCheckedContinuation { continuation in body { continuation.resume(returning: $0) } }
            default: return nil
            }
        }
        let tile = await answer("/tiles/1/1/0")
        #expect(tile?.status == 200)
        #expect(tile?.contentType == "image/png")
        #expect(tile?.body == Self.png + [7])
        let none = await answer("/tiles/1/0/0")
        #expect(none?.status == 204)
        #expect(none?.body == [])
        #expect(await answer("/tiles/1/2/0")?.status == 404)
        #expect(await answer("/tiles/../../etc/passwd")?.status == 404)
    }
}
