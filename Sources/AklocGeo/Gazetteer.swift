import AklocCore
import Synchronization

/// The populated places of data/places.bin (GeoNames, docs/geodata.md):
/// nearest place, places within a radius, and name search.
///
/// The file is mapped read-only and read in place. Opening checks the header
/// and that every section lies inside the file; each record, string and
/// index entry is checked as it is read, so a corrupt file gives a
/// `GeoDataReader.Error` from the lookup that meets the damage, never a read
/// outside the mapping. A lookup touches only the pages on its path: the
/// k-d tree's nodes from root to leaf, a few of their neighbours, and the
/// records it returns.
public struct Gazetteer: Sendable {
    public static let magic: UInt32 = 0x4C50_4B41  // "AKPL"
    public static let version: UInt32 = 1
    static let headerSize = 64
    static let recordSize = 36
    static let vectorSize = 12
    static let entrySize = 8
    static let none32: UInt32 = 0xFFFF_FFFF
    static let none16: UInt16 = 0xFFFF

    let file: GeoDataReader
    let records: GeoDataReader
    nonisolated(unsafe) let vectors: UnsafeRawBufferPointer
    let admin1: GeoDataReader
    let zones: GeoDataReader
    let index: GeoDataReader
    let pool: GeoDataReader
    public let count: Int
    let admin1Count: Int
    let zoneCount: Int
    let indexCount: Int
    /// Countries a filtered search found no place in (Antarctica has none in
    /// cities5000): such a search visits every record (10 ms), so the answer
    /// is remembered. A lock-protected set shared by copies of the gazetteer.
    private let placeless = PlacelessCountries()
    /// The split axes read so far (`SplitAxes`: the search's hot bytes, apart from the records).
    private let splitAxes: SplitAxes

    final class PlacelessCountries: Sendable {
        let keys = Mutex<Set<UInt16>>([])
    }

    /// Checks the header of a mapped places file; the bytes must outlive the gazetteer.
    public init(_ bytes: UnsafeRawBufferPointer) throws(GeoDataReader.Error) {
        let file = GeoDataReader(bytes)
        guard bytes.count >= Self.headerSize else {
            throw GeoDataReader.Error(.truncated, "places file of \(bytes.count) bytes has no header")
        }
        guard try file.uint32(at: 0) == Self.magic else {
            throw GeoDataReader.Error(.badMagic, "not an akloc places file")
        }
        let version = try file.uint32(at: 4)
        guard version == Self.version else {
            throw GeoDataReader.Error(.badVersion, "places file version \(version), this akloc reads \(Self.version)")
        }
        func field(_ n: Int) throws(GeoDataReader.Error) -> Int { Int(try file.uint32(at: 8 + 4 * n)) }
        let count = try field(0)
        let admin1Count = try field(1)
        let zoneCount = try field(2)
        let indexCount = try field(3)
        let offsets = [try field(4), try field(5), try field(6), try field(7), try field(8), try field(9)]
        let poolLength = try field(10)
        let total = try field(11)
        guard try field(12) == Self.recordSize else {
            throw GeoDataReader.Error(.badVersion, "places records are not \(Self.recordSize) bytes")
        }
        guard total == bytes.count else {
            throw GeoDataReader.Error(.truncated, "places file is \(bytes.count) bytes, its header says \(total)")
        }
        guard count > 0, count < 1 << 30 else { throw GeoDataReader.Error(.corrupt, "places count \(count)") }
        let sizes = [
            count * Self.recordSize, count * Self.vectorSize, admin1Count * 4, zoneCount * 4,
            indexCount * Self.entrySize, poolLength,
        ]
        var end = Self.headerSize
        var slices: [UnsafeRawBufferPointer] = []
        for (offset, size) in zip(offsets, sizes) {
            guard offset >= end else { throw GeoDataReader.Error(.corrupt, "places sections overlap at \(offset)") }
            slices.append(try file.slice(at: offset, length: size))
            end = offset + size
        }
        self.file = file
        self.count = count
        self.admin1Count = admin1Count
        self.zoneCount = zoneCount
        self.indexCount = indexCount
        records = GeoDataReader(slices[0])
        vectors = slices[1]
        admin1 = GeoDataReader(slices[2])
        zones = GeoDataReader(slices[3])
        index = GeoDataReader(slices[4])
        pool = GeoDataReader(slices[5])
        splitAxes = SplitAxes(count: count)
    }

    // MARK: Records

    /// The place at `index` (0 ..< count).
    public func place(at index: Int) throws(GeoDataReader.Error) -> PopulatedPlace {
        guard index >= 0, index < count else {
            throw GeoDataReader.Error(.corrupt, "place \(index) of \(count)")
        }
        let base = index * Self.recordSize
        let admin1Index = try records.uint16(at: base + 28)
        let zoneIndex = try records.uint16(at: base + 30)
        let admin2 = try records.uint32(at: base + 24)
        return PopulatedPlace(
            index: index,
            name: try string(try records.uint32(at: base + 12)),
            asciiName: try string(try records.uint32(at: base + 16)),
            coordinate: try coordinate(at: index),
            countryCode: try countryCode(at: index),
            administrativeArea: admin1Index == Self.none16
                ? nil : try string(try tableEntry(admin1, Int(admin1Index), admin1Count)),
            subAdministrativeArea: admin2 == Self.none32 ? nil : try string(admin2),
            population: Int(try records.uint32(at: base + 8)),
            timeZone: zoneIndex == Self.none16 ? nil : try string(try tableEntry(zones, Int(zoneIndex), zoneCount)))
    }

    func coordinate(at index: Int) throws(GeoDataReader.Error) -> Coordinate {
        let base = index * Self.recordSize
        return Coordinate(
            latitude: Double(try records.int32(at: base)) / 1e6,
            longitude: Double(try records.int32(at: base + 4)) / 1e6)
    }

    func population(at index: Int) throws(GeoDataReader.Error) -> Int {
        Int(try records.uint32(at: index * Self.recordSize + 8))
    }

    /// The folded name, as the index holds it.
    func foldedName(at index: Int) throws(GeoDataReader.Error) -> String {
        try string(try records.uint32(at: index * Self.recordSize + 20))
    }

    /// The two ASCII letters packed as one UInt16 (first letter low).
    func countryKey(at index: Int) throws(GeoDataReader.Error) -> UInt16 {
        try records.uint16(at: index * Self.recordSize + 32)
    }

    func countryCode(at index: Int) throws(GeoDataReader.Error) -> String {
        let key = try countryKey(at: index)
        return String(decoding: [UInt8(key & 0xFF), UInt8(key >> 8)], as: UTF8.self)
    }

    static func countryKey(_ code: String) -> UInt16? {
        let bytes = Array(code.utf8)
        guard bytes.count == 2, bytes.allSatisfy({ $0 >= 0x41 && $0 <= 0x5A || $0 >= 0x61 && $0 <= 0x7A }) else {
            return nil
        }
        // GeoNames codes are upper case.
        return UInt16(bytes[0] & 0xDF) | UInt16(bytes[1] & 0xDF) << 8
    }

    private func tableEntry(_ table: GeoDataReader, _ index: Int, _ count: Int) throws(GeoDataReader.Error) -> UInt32 {
        guard index < count else { throw GeoDataReader.Error(.corrupt, "table entry \(index) of \(count)") }
        return try table.uint32(at: index * 4)
    }

    /// A pool string: a length byte, then its UTF-8.
    func string(_ ref: UInt32) throws(GeoDataReader.Error) -> String {
        let offset = Int(ref)
        let length = Int(try pool.uint8(at: offset))
        return try pool.string(at: offset + 1, length: length)
    }

    // MARK: Nearest

    /// The place nearest to `point`, or the nearest in `countryCode` (alpha-2,
    /// the country containing the point as the caller found it); nil when
    /// that country has no place. Distances are great-circle.
    public func nearest(to point: Coordinate, countryCode: String? = nil) throws -> PopulatedPlace? {
        let point = try GeoQueryError.checked(point, field: "coordinate")
        var filter: UInt16?
        if let countryCode {
            guard let key = Self.countryKey(countryCode) else {
                throw GeoQueryError(
                    .badCountryCode, field: "country", "country must be two letters (ISO 3166-1 alpha-2)")
            }
            filter = key
        }
        if let filter, placeless.keys.withLock({ $0.contains(filter) }) { return nil }
        let best = try NearestSearch.nearest(in: self, to: point.unitVector, filter: filter)
        guard best >= 0 else {
            if let filter { placeless.keys.withLock { _ = $0.insert(filter) } }
            return nil
        }
        return try place(at: best)
    }

    /// Every place within `radius` metres of `point`, nearest first.
    public func places(within radius: Double, of point: Coordinate) throws -> [(
        place: PopulatedPlace, distance: Double
    )] {
        let point = try GeoQueryError.checked(point, field: "coordinate")
        guard radius.isFinite, radius >= 0, radius <= 1_000_000 else {
            throw GeoQueryError(.badDistance, field: "within", "within must be 0 to 1 000 000 m")
        }
        // The chord that subtends `radius` along the sphere, with a metre of slack
        // for the Float vectors; the exact test is the haversine below.
        let halfAngle = (radius + 1) / Location.earthRadius / 2
        let chord = 2 * Trigonometry.sin(min(halfAngle, Double.pi / 2))
        var found: [Int] = []
        try collect(0, count, point.unitVector, chord * chord, &found)
        var result: [(place: PopulatedPlace, distance: Double)] = []
        for index in found {
            let distance = point.distance(to: try coordinate(at: index))
            if distance <= radius { result.append((try place(at: index), distance)) }
        }
        result.sort { ($0.distance, $0.place.index) < ($1.distance, $1.place.index) }
        return result
    }

    /// Record `index`'s unit vector (Float32 components); `index` below `count`.
    @inline(__always)
    func vector(at index: Int) -> (Double, Double, Double) {
        let base = index * Self.vectorSize
        return (
            Double(vectors.loadUnaligned(fromByteOffset: base, as: Float32.self)),
            Double(vectors.loadUnaligned(fromByteOffset: base + 4, as: Float32.self)),
            Double(vectors.loadUnaligned(fromByteOffset: base + 8, as: Float32.self))
        )
    }

    /// The split point's unit vector and axis of the subtree [low, high).
    @inline(__always)
    func node(_ index: Int) throws(GeoDataReader.Error) -> (v: (Double, Double, Double), axis: Int) {
        let (x, y, z) = vector(at: index)
        if let axis = splitAxes.axis(index) { return ((x, y, z), axis) }
        let axis = Int(try records.uint8(at: index * Self.recordSize + 34))
        guard axis < 3 else { throw GeoDataReader.Error(.corrupt, "place \(index) splits on axis \(axis)") }
        splitAxes.remember(index, axis: axis)
        return ((x, y, z), axis)
    }

    private func collect(
        _ low: Int, _ high: Int, _ target: (x: Double, y: Double, z: Double), _ limit: Double, _ found: inout [Int]
    ) throws(GeoDataReader.Error) {
        guard low < high else { return }
        let mid = low + (high - low) / 2
        let (v, axis) = try node(mid)
        let dx = target.x - v.0
        let dy = target.y - v.1
        let dz = target.z - v.2
        if dx * dx + dy * dy + dz * dz <= limit { found.append(mid) }
        let diff = axis == 0 ? dx : axis == 1 ? dy : dz
        if diff <= 0 || diff * diff <= limit { try collect(low, mid, target, limit, &found) }
        if diff >= 0 || diff * diff <= limit { try collect(mid + 1, high, target, limit, &found) }
    }
}
