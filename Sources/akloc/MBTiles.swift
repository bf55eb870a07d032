import AklocPosix
import CSQLite
import Glibc

/// A local MBTiles file (MBTiles 1.3: an SQLite database with a `tiles`
/// table and a `metadata` table) of raster tiles, read-only, for
/// `akloc map --tiles FILE.mbtiles` (docs/map.md). Everything that makes
/// a file unusable is found when it is opened, and named with the file.
///
/// The connection is opened in SQLite's serialized mode, so the page
/// server's requests may read tiles from any thread.
final class MBTiles: @unchecked Sendable {
    /// What the page needs to know of the tileset.
    struct Metadata: Equatable, Sendable {
        var name: String
        /// png, jpg or webp: the tiles' format as `format` names it (or as the tiles are, without it).
        var format: String
        var minZoom: Int
        var maxZoom: Int
        /// West, south, east, north in degrees, when the file says.
        var bounds: [Double]?
        var attribution: String?

        var mimeType: String {
            switch format {
            case "png": "image/png"
            case "jpg": "image/jpeg"
            default: "image/webp"
            }
        }
    }

    let path: String
    let metadata: Metadata
    private let database: OpaquePointer

    /// The deepest zoom a tile address may have: 2^30 columns still fit in 32 bits.
    static let maxZoom = 30

    private init(path: String, database: OpaquePointer, metadata: Metadata) {
        self.path = path
        self.database = database
        self.metadata = metadata
    }

    deinit { sqlite3_close_v2(database) }

    /// Opens `path` and checks it is an MBTiles file of raster tiles.
    static func open(_ path: String) throws(CLIError) -> MBTiles {
        func bad(_ problem: String) -> CLIError { .usage("--tiles \(path): \(problem)") }
        let info: stat?
        do {
            info = try FileSystem.status(path)
        } catch {
            throw bad(error.message)
        }
        guard let info else { throw bad("no such file") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw bad("not a regular file") }
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK, let database = handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(handle)
            throw bad(message)
        }
        do {
            let metadata = try readMetadata(database, bad: bad)
            return MBTiles(path: path, database: database, metadata: metadata)
        } catch {
            sqlite3_close_v2(database)
            throw error
        }
    }

    /// The tile at `zoom`/`column`/`row` in the XYZ scheme the page asks in
    /// (row 0 at the north), or nil when the file has none there. MBTiles
    /// numbers rows from the south (TMS): `tmsRow` flips them.
    func tile(zoom: Int, column: Int, row: Int) throws(CLIError) -> [UInt8]? {
        guard Self.isValid(zoom: zoom, column: column, row: row) else { return nil }
        let statement = try Self.prepare(
            database, "SELECT tile_data FROM tiles WHERE zoom_level = ?1 AND tile_column = ?2 AND tile_row = ?3",
            bad: { .failure("--tiles \(path): \($0)") })
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_int64(statement, 1, Int64(zoom))
        sqlite3_bind_int64(statement, 2, Int64(column))
        sqlite3_bind_int64(statement, 3, Int64(Self.tmsRow(zoom: zoom, row: row)))
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return Self.blob(statement, 0)
        case SQLITE_DONE: return nil
        default: throw .failure("--tiles \(path): \(String(cString: sqlite3_errmsg(database)))")
        }
    }

    /// Whether a tile address is on the map: 0 ≤ column, row < 2^zoom.
    static func isValid(zoom: Int, column: Int, row: Int) -> Bool {
        guard (0...maxZoom).contains(zoom) else { return false }
        let size = 1 << zoom
        return (0..<size).contains(column) && (0..<size).contains(row)
    }

    /// The TMS row of XYZ row `row` (and back: the flip is its own inverse).
    static func tmsRow(zoom: Int, row: Int) -> Int { (1 << zoom) - 1 - row }

    /// The raster format of a tile's bytes (png, jpg, webp), "gzip" for
    /// gzipped vector tiles, or nil.
    static func format(ofTile bytes: [UInt8]) -> String? {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "jpg" }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) {
            return "webp"
        }
        if bytes.starts(with: [0x1F, 0x8B]) { return "gzip" }
        return nil
    }

    /// `format` as the metadata may spell it (MBTiles 1.3: pbf, jpg, png,
    /// webp, or an IETF media type), as png, jpg or webp; nil otherwise.
    static func rasterFormat(_ value: String) -> String? {
        switch value.lowercased() {
        case "png", "image/png": "png"
        case "jpg", "jpeg", "image/jpeg", "image/jpg": "jpg"
        case "webp", "image/webp": "webp"
        default: nil
        }
    }

    private static func readMetadata(
        _ database: OpaquePointer, bad: (String) -> CLIError
    ) throws(CLIError) -> Metadata {
        // The first statement reads the file's header: a file that is not SQLite fails here.
        var values: [String: String] = [:]
        let rows = try prepare(database, "SELECT name, value FROM metadata", bad: bad)
        defer { sqlite3_finalize(rows) }
        while true {
            let step = sqlite3_step(rows)
            if step == SQLITE_DONE { break }
            guard step == SQLITE_ROW else { throw bad(String(cString: sqlite3_errmsg(database))) }
            if let name = text(rows, 0), let value = text(rows, 1) { values[name] = value }
        }
        let first = try prepare(
            database, "SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles LIMIT 1", bad: bad)
        defer { sqlite3_finalize(first) }
        let step = sqlite3_step(first)
        guard step != SQLITE_DONE else { throw bad("its tiles table holds no tiles") }
        guard step == SQLITE_ROW else { throw bad(String(cString: sqlite3_errmsg(database))) }
        let sample = blob(first, 3)
        let sampleFormat = format(ofTile: sample)
        let format: String
        if let declared = values["format"] {
            if declared.lowercased() == "pbf" || declared.lowercased() == "application/x-protobuf" {
                throw bad(
                    "its tiles are vector tiles (format \(declared)); akloc map draws raster tiles (png, jpg, webp)")
            }
            guard let raster = rasterFormat(declared) else {
                throw bad("format '\(declared)' is not a raster tile format (png, jpg, webp)")
            }
            guard sampleFormat == raster else {
                throw bad("its metadata says format \(declared), but a tile is \(sampleFormat ?? "not an image")")
            }
            format = raster
        } else {
            // MBTiles 1.0 had no format row: the tiles say what they are.
            guard let sampleFormat, sampleFormat != "gzip" else {
                throw bad("its metadata has no format and its tiles are not PNG, JPEG or WebP")
            }
            format = sampleFormat
        }
        var minZoom = values["minzoom"].flatMap { Int($0) }
        var maxZoom = values["maxzoom"].flatMap { Int($0) }
        if minZoom == nil || maxZoom == nil {
            let range = try prepare(database, "SELECT min(zoom_level), max(zoom_level) FROM tiles", bad: bad)
            defer { sqlite3_finalize(range) }
            if sqlite3_step(range) == SQLITE_ROW {
                minZoom = minZoom ?? Int(sqlite3_column_int64(range, 0))
                maxZoom = maxZoom ?? Int(sqlite3_column_int64(range, 1))
            }
        }
        guard let minZoom, let maxZoom, 0 <= minZoom, minZoom <= maxZoom, maxZoom <= Self.maxZoom else {
            throw bad(
                "its zoom levels (minzoom \(values["minzoom"] ?? "?"), maxzoom \(values["maxzoom"] ?? "?")) are not 0…30"
            )
        }
        var bounds: [Double]?
        if let text = values["bounds"] {
            let numbers = text.split(separator: ",").compactMap { Double(String($0.filter { $0 != " " })) }
            if numbers.count == 4, numbers.allSatisfy(\.isFinite), (-180...180).contains(numbers[0]),
                (-180...180).contains(numbers[2]), (-90...90).contains(numbers[1]), (-90...90).contains(numbers[3]),
                numbers[1] < numbers[3]
            {
                bounds = numbers
            }
        }
        return Metadata(
            name: values["name"] ?? "", format: format, minZoom: minZoom, maxZoom: maxZoom, bounds: bounds,
            attribution: values["attribution"])
    }

    private static func prepare(
        _ database: OpaquePointer, _ sql: String, bad: (String) -> CLIError
    ) throws(CLIError) -> OpaquePointer {
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v2(database, sql, -1, &statement, nil)
        guard status == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            let message = String(cString: sqlite3_errmsg(database))
            switch status {
            case SQLITE_NOTADB: throw bad("not an SQLite database (\(message))")
            case SQLITE_ERROR where message.hasPrefix("no such table: "):
                throw bad("not an MBTiles file: it has no \(message.dropFirst("no such table: ".count)) table")
            case SQLITE_ERROR where message.hasPrefix("no such column: "):
                throw bad("not an MBTiles file: \(message)")
            default: throw bad(message)
            }
        }
        return statement
    }

    private static func text(_ statement: OpaquePointer, _ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: pointer)
    }

    private static func blob(_ statement: OpaquePointer, _ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}
