import AklocCore

/// One polygon-index file, data/borders.bin or data/timezones.bin: named
/// regions (countries, IANA zones) as rings of int32 coordinates in 1e-7
/// degrees, and a quadtree under a 2-degree grid whose leaves list, per
/// region, the edges that touch the cell and whether a reference point of
/// the cell is inside. A point-in-region test then reads one grid entry, a
/// few nodes and a few dozen edges, so a lookup touches a handful of pages
/// of the mapping. scripts/geodata/polyindex.py writes the format and
/// documents it byte by byte; docs/geodata.md explains the choices.
///
/// Every read is bounds-checked: a truncated or corrupted file gives
/// `GeoDataReader.Error`, never a read outside the buffer or a crash.
public struct PolygonIndex: Sendable {
    public static let version: UInt32 = 1
    static let headerSize = 64
    /// Splits below this are refused: the script's depth limit is 10.
    static let maxDepth = 32

    /// Region names in file order: alpha-2 codes, or IANA zone identifiers.
    public let names: [String]
    private let reader: GeoDataReader
    private let units: Double
    private let unitsPerDegree: Int
    private let columns: Int
    private let rows: Int
    private let cellWidth: Int
    private let cellHeight: Int
    private let regionTable: Int
    private let ringTable: Int
    private let ringCount: Int
    private let vertexOffset: Int
    private let vertexCount: Int
    private let gridOffset: Int
    private let nodesOffset: Int
    private let nodesLength: Int

    public init(_ bytes: UnsafeRawBufferPointer) throws(GeoDataReader.Error) {
        let reader = GeoDataReader(bytes)
        self.reader = reader
        guard bytes.count >= Self.headerSize else {
            throw GeoDataReader.Error(.truncated, "\(bytes.count) bytes, shorter than the 64-byte header")
        }
        guard try reader.string(at: 0, length: 4) == "AKPI" else {
            throw GeoDataReader.Error(.badMagic, "not a polygon index (no AKPI magic)")
        }
        let version = try reader.uint32(at: 4)
        guard version == Self.version else {
            throw GeoDataReader.Error(
                .badVersion, "polygon index version \(version), this reader knows \(Self.version)")
        }
        func field(_ offset: Int) throws(GeoDataReader.Error) -> Int { Int(try reader.uint32(at: offset)) }
        let size = try field(8)
        guard size == bytes.count else {
            throw GeoDataReader.Error(
                size > bytes.count ? .truncated : .corrupt, "header says \(size) bytes, the file has \(bytes.count)")
        }
        let regionCount = try field(12)
        regionTable = try field(16)
        let stringsOffset = try field(20)
        let stringsLength = try field(24)
        vertexOffset = try field(28)
        vertexCount = try field(32)
        columns = try field(36)
        rows = try field(40)
        gridOffset = try field(44)
        nodesOffset = try field(48)
        nodesLength = try field(52)
        unitsPerDegree = try field(56)
        ringTable = try field(60)
        guard columns > 0, rows > 0, unitsPerDegree > 0, (360 * unitsPerDegree) % columns == 0,
            (180 * unitsPerDegree) % rows == 0, 180 * unitsPerDegree <= Int(Int32.max)
        else {
            throw GeoDataReader.Error(.corrupt, "grid \(columns)x\(rows) at \(unitsPerDegree) units per degree")
        }
        units = Double(unitsPerDegree)
        cellWidth = 360 * unitsPerDegree / columns
        cellHeight = 180 * unitsPerDegree / rows
        // Sections must lie inside the file before anything is sized from them.
        func section(_ name: String, _ offset: Int, _ count: Int, _ stride: Int) throws(GeoDataReader.Error) {
            guard count <= bytes.count / max(stride, 1), offset <= bytes.count - count * stride else {
                throw GeoDataReader.Error(.corrupt, "\(name) (\(count) x \(stride) bytes at \(offset)) past the end")
            }
        }
        try section("region table", regionTable, regionCount, 16)
        try section("strings", stringsOffset, stringsLength, 1)
        try section("vertices", vertexOffset, vertexCount, 8)
        try section("grid", gridOffset, columns * rows, 4)
        try section("nodes", nodesOffset, nodesLength, 1)
        var names: [String] = []
        names.reserveCapacity(regionCount)
        var rings = 0
        for region in 0..<regionCount {
            let entry = regionTable + region * 16
            let nameOffset = try field(entry)
            let nameLength = Int(try reader.uint16(at: entry + 4))
            guard nameOffset <= stringsLength, nameLength <= stringsLength - nameOffset else {
                throw GeoDataReader.Error(.corrupt, "region \(region)'s name past the strings")
            }
            names.append(try reader.string(at: stringsOffset + nameOffset, length: nameLength))
            let firstRing = try field(entry + 8)
            let count = try field(entry + 12)
            rings = max(rings, firstRing + count)
        }
        try section("ring table", ringTable, rings, 8)
        ringCount = rings
        self.names = names
    }

    // MARK: Point in region

    /// The regions containing the point, in file order (one, but two where
    /// simplified neighbours overlap; none at sea for the borders file).
    public func regions(containing point: Coordinate) throws(GeoDataReader.Error) -> [Int] {
        var found: [Int] = []
        try forEachRegion(containing: point) { region in
            found.append(region)
            return true
        }
        return found
    }

    /// The first region containing the point.
    public func firstRegion(containing point: Coordinate) throws(GeoDataReader.Error) -> Int? {
        var found: Int?
        try forEachRegion(containing: point) { region in
            found = region
            return false
        }
        return found
    }

    /// The integer cell a traversal is in, and the node at its offset.
    private struct Cell {
        var node: Int
        var west: Int
        var south: Int
        var east: Int
        var north: Int
    }

    private func topCell(column: Int, row: Int) throws(GeoDataReader.Error) -> Cell {
        let node = Int(try reader.uint32(at: gridOffset + (row * columns + column) * 4))
        let west = -180 * unitsPerDegree + column * cellWidth
        let south = -90 * unitsPerDegree + row * cellHeight
        return Cell(node: node, west: west, south: south, east: west + cellWidth, north: south + cellHeight)
    }

    private func nodeKind(_ node: Int) throws(GeoDataReader.Error) -> UInt8 {
        guard node >= 0, node < nodesLength else {
            throw GeoDataReader.Error(.corrupt, "node offset \(node) outside the nodes (\(nodesLength) bytes)")
        }
        let kind = try reader.uint8(at: nodesOffset + node)
        guard kind <= 1 else { throw GeoDataReader.Error(.corrupt, "node kind \(kind) at \(node)") }
        return kind
    }

    /// Child `index` (0 SW, 1 SE, 2 NW, 3 NE) of a split cell.
    private func child(_ cell: Cell, _ index: Int) throws(GeoDataReader.Error) -> Cell {
        let node = Int(try reader.uint32(at: nodesOffset + cell.node + 1 + index * 4))
        let midX = (cell.west + cell.east) >> 1
        let midY = (cell.south + cell.north) >> 1
        let east = index & 1 == 1
        let north = index & 2 == 2
        return Cell(
            node: node, west: east ? midX : cell.west, south: north ? midY : cell.south,
            east: east ? cell.east : midX, north: north ? cell.north : midY)
    }

    private func leafCell(x: Double, y: Double) throws(GeoDataReader.Error) -> Cell {
        let column = min(max(Int((x / units + 180) / (Double(cellWidth) / units)), 0), columns - 1)
        let row = min(max(Int((y / units + 90) / (Double(cellHeight) / units)), 0), rows - 1)
        var cell = try topCell(column: column, row: row)
        var depth = 0
        while try nodeKind(cell.node) == 1 {
            depth += 1
            guard depth <= Self.maxDepth else { throw GeoDataReader.Error(.corrupt, "quadtree deeper than 32") }
            let midX = (cell.west + cell.east) >> 1
            let midY = (cell.south + cell.north) >> 1
            cell = try child(cell, (x >= Double(midX) ? 1 : 0) | (y >= Double(midY) ? 2 : 0))
        }
        return cell
    }

    /// The point in file units. The poles and the antimeridian are the
    /// polygons' own edges, where the even-odd rule says outside: a unit
    /// (1 cm) inside, they answer.
    private func inUnits(_ point: Coordinate) -> (x: Double, y: Double) {
        (
            min(max(point.longitude * units, -180 * units + 1), 180 * units - 1),
            min(max(point.latitude * units, -90 * units + 1), 90 * units - 1)
        )
    }

    /// Calls `body` with each region containing the point until it returns false.
    private func forEachRegion(
        containing point: Coordinate, _ body: (Int) -> Bool
    ) throws(GeoDataReader.Error) {
        // Callers check coordinates (GeoQueryError); a bad one here finds nothing.
        guard point.isValid else { return }
        let (x, y) = inUnits(point)
        let cell = try leafCell(x: x, y: y)
        let x0 = Double(cell.west) + 0.5
        let y0 = Double(cell.south) + 0.5
        try forEachEntry(of: cell) { (region, referenceInside, edges) throws(GeoDataReader.Error) in
            var inside = referenceInside
            try edges { ax, ay, bx, by in
                // East along y0 from the reference point to x: the ray-cast
                // rule the script used for the reference status, so the two
                // counts differ exactly by these crossings.
                if (ay > y0) != (by > y0) {
                    let crossing = ax + (y0 - ay) * (bx - ax) / (by - ay)
                    if (crossing > x0) != (crossing > x) { inside.toggle() }
                }
                // Then north or south along x from y0 to y.
                if (ax > x) != (bx > x) {
                    let crossing = ay + (x - ax) * (by - ay) / (bx - ax)
                    if (crossing > y0) != (crossing > y) { inside.toggle() }
                }
            }
            return inside ? body(region) : true
        }
    }

    /// The edges of one leaf entry, as doubles in units: (ax, ay, bx, by).
    private typealias EdgeVisitor = ((Double, Double, Double, Double) -> Void) throws(GeoDataReader.Error) -> Void

    /// Calls `body(region, referenceInside, edges)` per entry of a leaf while it returns true.
    private func forEachEntry(
        of cell: Cell, _ body: (Int, Bool, EdgeVisitor) throws(GeoDataReader.Error) -> Bool
    ) throws(GeoDataReader.Error) {
        var at = nodesOffset + cell.node + 1
        let entries = Int(try reader.uint16(at: at))
        at += 2
        for _ in 0..<entries {
            let region = Int(try reader.uint16(at: at))
            let flags = try reader.uint8(at: at + 2)
            let runs = Int(try reader.uint16(at: at + 3))
            at += 5
            guard region < names.count else {
                throw GeoDataReader.Error(.corrupt, "leaf names region \(region) of \(names.count)")
            }
            let runsStart = at
            at += runs * 6
            let visitor: EdgeVisitor = { (edge) throws(GeoDataReader.Error) in
                var run = runsStart
                for _ in 0..<runs {
                    let first = Int(try reader.uint32(at: run))
                    let count = Int(try reader.uint16(at: run + 4))
                    run += 6
                    try visitEdges(first: first, count: count, edge)
                }
            }
            guard try body(region, flags & 1 == 1, visitor) else { return }
        }
    }

    /// Edges first ..< first + count, read from one checked slice.
    private func visitEdges(
        first: Int, count: Int, _ edge: (Double, Double, Double, Double) -> Void
    ) throws(GeoDataReader.Error) {
        guard count > 0 else { return }
        guard first < vertexCount, count < vertexCount - first else {
            throw GeoDataReader.Error(.corrupt, "edges \(first)+\(count) past the \(vertexCount) vertices")
        }
        let slice = try reader.slice(at: vertexOffset + first * 8, length: (count + 1) * 8)
        func coordinate(_ index: Int) -> (Double, Double) {
            let x = Int32(littleEndian: slice.loadUnaligned(fromByteOffset: index * 8, as: Int32.self))
            let y = Int32(littleEndian: slice.loadUnaligned(fromByteOffset: index * 8 + 4, as: Int32.self))
            return (Double(x), Double(y))
        }
        var (ax, ay) = coordinate(0)
        for index in 1...count {
            let (bx, by) = coordinate(index)
            edge(ax, ay, bx, by)
            ax = bx
            ay = by
        }
    }

    // MARK: Nearest edge

    /// The region with an edge nearest the point, if one is within `radius`
    /// metres (at most 1 000 km), and that distance; `excluded` is skipped. Distances are measured in a local
    /// equirectangular projection around the point: within 0.1 % of the
    /// great circle at the 22 km of a territorial sea, away from the poles.
    public func nearestRegion(
        to point: Coordinate, within radius: Double, excluding excluded: Int? = nil
    ) throws(GeoDataReader.Error) -> (region: Int, distance: Double)? {
        try nearestRegion(to: point, within: radius) { $0 != excluded }
    }

    /// The nearest of the regions `among` accepts, as `nearestRegion(to:within:excluding:)`.
    public func nearestRegion(
        to point: Coordinate, within radius: Double, among accepts: (Int) -> Bool
    ) throws(GeoDataReader.Error) -> (region: Int, distance: Double)? {
        guard point.isValid, radius.isFinite, radius >= 0, radius <= 1_000_000 else { return nil }
        let metresPerDegree = Location.earthRadius * Double.pi / 180
        let cosLatitude = max(Trigonometry.cos(point.latitude * Double.pi / 180), 1e-6)
        let latitudeSpan = radius / metresPerDegree
        let longitudeSpan = min(latitudeSpan / cosLatitude, 180)
        let kx = cosLatitude * metresPerDegree / units
        let ky = metresPerDegree / units
        let x = point.longitude * units
        let y = point.latitude * units
        var best: (region: Int, distance: Double)?
        let south = max(point.latitude - latitudeSpan, -90)
        let north = min(point.latitude + latitudeSpan, 90)
        // The box, split where it crosses the antimeridian; `shift` brings
        // the other side's coordinates next to the point.
        var spans: [(west: Double, east: Double, shift: Double)] = []
        let west = point.longitude - longitudeSpan
        let east = point.longitude + longitudeSpan
        spans.append((max(west, -180), min(east, 180), 0))
        if west < -180 { spans.append((west + 360, 180, -360 * units)) }
        if east > 180 { spans.append((-180, east - 360, 360 * units)) }
        for span in spans {
            let box = (
                west: span.west * units, south: south * units, east: span.east * units, north: north * units
            )
            let firstColumn = min(max(Int((span.west + 180) * units) / cellWidth, 0), columns - 1)
            let lastColumn = min(max(Int((span.east + 180) * units) / cellWidth, 0), columns - 1)
            let firstRow = min(max(Int((south + 90) * units) / cellHeight, 0), rows - 1)
            let lastRow = min(max(Int((north + 90) * units) / cellHeight, 0), rows - 1)
            for row in firstRow...lastRow {
                for column in firstColumn...lastColumn {
                    try forEachLeaf(try topCell(column: column, row: row), overlapping: box, depth: 0) {
                        (cell) throws(GeoDataReader.Error) in
                        try forEachEntry(of: cell) { (region, _, edges) throws(GeoDataReader.Error) in
                            guard accepts(region) else { return true }
                            try edges { ax, ay, bx, by in
                                let distance = Self.segmentDistance(
                                    px: 0, py: 0,
                                    ax: (ax + span.shift - x) * kx, ay: (ay - y) * ky,
                                    bx: (bx + span.shift - x) * kx, by: (by - y) * ky)
                                if distance <= radius, distance < best?.distance ?? .infinity {
                                    best = (region, distance)
                                }
                            }
                            return true
                        }
                    }
                }
            }
        }
        return best
    }

    private func forEachLeaf(
        _ cell: Cell, overlapping box: (west: Double, south: Double, east: Double, north: Double), depth: Int,
        _ body: (Cell) throws(GeoDataReader.Error) -> Void
    ) throws(GeoDataReader.Error) {
        guard Double(cell.east) >= box.west, Double(cell.west) <= box.east, Double(cell.north) >= box.south,
            Double(cell.south) <= box.north
        else { return }
        if try nodeKind(cell.node) == 0 {
            try body(cell)
            return
        }
        guard depth < Self.maxDepth else { throw GeoDataReader.Error(.corrupt, "quadtree deeper than 32") }
        for index in 0..<4 {
            try forEachLeaf(try child(cell, index), overlapping: box, depth: depth + 1, body)
        }
    }

    /// Euclidean distance from p to the segment a–b.
    static func segmentDistance(
        px: Double, py: Double, ax: Double, ay: Double, bx: Double, by: Double
    ) -> Double {
        let dx = bx - ax
        let dy = by - ay
        let lengthSquared = dx * dx + dy * dy
        var t = lengthSquared > 0 ? ((px - ax) * dx + (py - ay) * dy) / lengthSquared : 0
        t = min(max(t, 0), 1)
        let cx = ax + t * dx - px
        let cy = ay + t * dy - py
        return (cx * cx + cy * cy).squareRoot()
    }

    // MARK: Linear scan

    /// The regions containing the point by an even-odd test over every ring
    /// of every region, without the index: the brute force the tests and
    /// the benchmark compare the index with.
    public func regionsByLinearScan(containing point: Coordinate) throws(GeoDataReader.Error) -> [Int] {
        guard point.isValid else { return [] }
        let (x, y) = inUnits(point)
        var found: [Int] = []
        for region in 0..<names.count {
            let entry = regionTable + region * 16
            let firstRing = Int(try reader.uint32(at: entry + 8))
            let count = Int(try reader.uint32(at: entry + 12))
            var inside = false
            for ring in firstRing..<(firstRing + count) {
                let first = Int(try reader.uint32(at: ringTable + ring * 8))
                let length = Int(try reader.uint32(at: ringTable + ring * 8 + 4))
                guard length >= 2 else { continue }
                try visitEdges(first: first, count: length - 1) { ax, ay, bx, by in
                    if (ay > y) != (by > y), x < ax + (y - ay) * (bx - ax) / (by - ay) { inside.toggle() }
                }
            }
            if inside { found.append(region) }
        }
        return found
    }

    /// Each ring of `region` as longitude, latitude pairs in degrees, first
    /// point repeated last: the outlines `akloc map` draws.
    public func forEachRing(
        ofRegion region: Int, _ body: ([(longitude: Double, latitude: Double)]) -> Void
    ) throws(GeoDataReader.Error) {
        guard region >= 0, region < names.count else { return }
        let entry = regionTable + region * 16
        let firstRing = Int(try reader.uint32(at: entry + 8))
        let count = Int(try reader.uint32(at: entry + 12))
        for ring in firstRing..<(firstRing + count) {
            let first = Int(try reader.uint32(at: ringTable + ring * 8))
            let length = Int(try reader.uint32(at: ringTable + ring * 8 + 4))
            guard length >= 2 else { continue }
            var points: [(longitude: Double, latitude: Double)] = []
            points.reserveCapacity(length)
            try visitEdges(first: first, count: length - 1) { ax, ay, bx, by in
                if points.isEmpty { points.append((ax / units, ay / units)) }
                points.append((bx / units, by / units))
            }
            body(points)
        }
    }

    /// Rings in the file (for reports and checks).
    public var ringTotal: Int { ringCount }
}
