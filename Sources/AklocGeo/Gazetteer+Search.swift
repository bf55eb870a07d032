import AklocCore

extension Gazetteer {
    /// Longest query accepted, in UTF-8 bytes before folding.
    public static let maxQueryBytes = 256
    public static let maxLimit = 100

    /// The query's rule (at most `maxQueryBytes`, a letter or digit once
    /// folded), public so a request is refused for it before the lookup
    /// runs; the folded query when it passes.
    public static func checkQuery(_ query: String) throws(GeoQueryError) -> String {
        try GeoQueryError.checkedQuery(query, field: "query", maxBytes: maxQueryBytes)
    }

    /// How a place's names met the query; better matches sort first.
    public enum Match: Int, Comparable, Sendable {
        /// The query is the whole folded name or alternate name.
        case exact
        /// The name (or an alternate) starts with the query.
        case prefix
        /// A later word of the name (or an alternate) starts with the query.
        case wordPrefix

        public static func < (lhs: Match, rhs: Match) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public struct SearchResult: Hashable, Sendable {
        public var place: PopulatedPlace
        public var match: Match
        /// Metres from `near`, when the search had one.
        public var distance: Double?
    }

    /// Places whose name or an alternate name has a word starting with the
    /// folded query (several words match a run of words), within `within`
    /// metres of `near` (0: anywhere). Ranked by match, then distance, then
    /// population (larger first); at most `limit` (1 ... 100).
    public func searchPlaces(
        _ query: String, near: Coordinate?, within: Double = 10_000, limit: Int = 10
    ) throws -> [SearchResult] {
        let folded = Array(try Self.checkQuery(query).utf8)
        guard limit >= 1, limit <= Self.maxLimit else {
            throw GeoQueryError(.badLimit, field: "limit", "limit must be 1 to \(Self.maxLimit)")
        }
        guard within.isFinite, within >= 0 else {
            throw GeoQueryError(.badDistance, field: "within", "within must be a distance of 0 m or more")
        }
        let near = try near.map { (point) throws(GeoQueryError) in try GeoQueryError.checked(point, field: "near") }

        // Pass 1: each matching place's best match. A short query can match
        // tens of thousands of entries; then a byte per place beats a dictionary.
        let first = try bound(folded, below: 0)
        let last = try bound(folded, below: 1)
        // The entries whose text is the query itself sort first among those
        // that start with it: no entry needs its text read to tell.
        let exactEnd = try firstLonger(than: folded.count, in: first..<last)
        var byMatch: [[Int]] = [[], [], []]
        if last - first > 4096 {
            var marks = [UInt8](repeating: 0, count: count)
            for entry in first..<last {
                let (place, match) = try self.entry(entry, exact: entry < exactEnd)
                let mark = UInt8(match.rawValue + 1)
                if marks[place] == 0 || mark < marks[place] { marks[place] = mark }
            }
            for (place, mark) in marks.enumerated() where mark != 0 { byMatch[Int(mark) - 1].append(place) }
        } else {
            var best: [Int: Match] = [:]
            for entry in first..<last {
                let (place, match) = try self.entry(entry, exact: entry < exactEnd)
                if best[place].map({ match < $0 }) ?? true { best[place] = match }
            }
            for (place, match) in best { byMatch[match.rawValue].append(place) }
        }

        // Pass 2: best match kind first; a kind is looked at only while the
        // results are not full, since any place of it ranks below them all.
        var top = TopResults(limit: limit)
        let target = near?.unitVector ?? (x: 0, y: 0, z: 0)
        for (kind, places) in byMatch.enumerated() {
            if top.isFull { break }
            for place in places {
                var distance = 0.0
                if let near {
                    // A place farther than `within` is out, and once full, the
                    // results take a place of this kind only if it is no
                    // farther than their last. The arc is at least the chord
                    // between the unit vectors (the k-d tree's; their Float
                    // components move it by under 2 m, hence 10 m of slack):
                    // most of a short query's thousands of places then need no
                    // haversine.
                    let reach = min(top.worstDistance ?? .infinity, within > 0 ? within : .infinity)
                    if reach < .infinity {
                        let v = vector(at: place)
                        let chord =
                            ((target.x - v.0) * (target.x - v.0) + (target.y - v.1) * (target.y - v.1)
                            + (target.z - v.2) * (target.z - v.2)).squareRoot()
                        if Location.earthRadius * chord - 10 > reach { continue }
                    }
                    distance = near.distance(to: try coordinate(at: place))
                    if within > 0, distance > within { continue }
                }
                top.insert((kind, distance, -(try population(at: place)), place))
            }
        }
        var results: [SearchResult] = []
        for candidate in top.rows {
            results.append(
                SearchResult(
                    place: try place(at: candidate.place), match: Match(rawValue: candidate.match)!,
                    distance: near == nil ? nil : candidate.distance))
        }
        return results
    }

    /// One index entry's place and how it matches, given that the query is
    /// a prefix of its text, and whether its text is the query itself.
    private func entry(_ entry: Int, exact: Bool) throws(GeoDataReader.Error) -> (place: Int, match: Match) {
        let value = try index.uint32(at: entry * Self.entrySize + 4)
        let place = Int(value >> 2)
        guard place < count else { throw GeoDataReader.Error(.corrupt, "index entry \(entry) names place \(place)") }
        guard value & 2 != 0 else { return (place, .wordPrefix) }
        return (place, exact ? .exact : .prefix)
    }

    /// The first entry of `range` (all starting with a query of `length`
    /// bytes) whose text goes on past it; the ones before are the query.
    private func firstLonger(than length: Int, in range: Range<Int>) throws(GeoDataReader.Error) -> Int {
        var low = range.lowerBound
        var high = range.upperBound
        while low < high {
            let mid = low + (high - low) / 2
            let start = Int(try index.uint32(at: mid * Self.entrySize))
            if try pool.uint8(at: start + length) == 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The first index entry whose comparison with `query` is not below
    /// `order`: 0 gives the first entry starting with it, 1 the first after those.
    private func bound(_ query: [UInt8], below order: Int) throws(GeoDataReader.Error) -> Int {
        var low = 0
        var high = indexCount
        while low < high {
            let mid = low + (high - low) / 2
            if try compare(entry: mid, with: query) < order { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// -1 if the entry's text sorts before `query` and does not start with it,
    /// 0 if it starts with it, 1 if it sorts after.
    private func compare(entry: Int, with query: [UInt8]) throws(GeoDataReader.Error) -> Int {
        let start = Int(try index.uint32(at: entry * Self.entrySize))
        // Folded strings end with a NUL within 255 bytes of their start.
        for (i, byte) in query.enumerated() {
            let text = try pool.uint8(at: start + i)
            if text == 0 { return -1 }
            if text != byte { return text < byte ? -1 : 1 }
            if i == 255 { throw GeoDataReader.Error(.corrupt, "index entry \(entry) has no end") }
        }
        return 0
    }
}

/// The best `limit` candidates by (match, distance, −population, place), kept sorted.
private struct TopResults {
    typealias Row = (match: Int, distance: Double, population: Int, place: Int)
    let limit: Int
    var rows: [Row] = []

    init(limit: Int) {
        self.limit = limit
        rows.reserveCapacity(limit + 1)
    }

    var isFull: Bool { rows.count >= limit }

    /// The last row's distance, once the rows are full.
    var worstDistance: Double? { isFull ? rows.last?.distance : nil }

    static func less(_ a: Row, _ b: Row) -> Bool {
        (a.match, a.distance, a.population, a.place) < (b.match, b.distance, b.population, b.place)
    }

    mutating func insert(_ row: Row) {
        if isFull, let worst = rows.last, !Self.less(row, worst) { return }
        var at = rows.count
        while at > 0, Self.less(row, rows[at - 1]) { at -= 1 }
        rows.insert(row, at: at)
        if rows.count > limit { rows.removeLast() }
    }
}
