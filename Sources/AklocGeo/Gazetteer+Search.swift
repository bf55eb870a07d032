extension Gazetteer {
    /// Longest query accepted, in UTF-8 bytes before folding.
    public static let maxQueryBytes = 256
    public static let maxLimit = 100

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
        guard query.utf8.count <= Self.maxQueryBytes else {
            throw GeoQueryError(.queryTooLong, field: "query", "query is longer than \(Self.maxQueryBytes) bytes")
        }
        let folded = Array(TextFolding.fold(query).utf8)
        guard !folded.isEmpty else {
            throw GeoQueryError(.emptyQuery, field: "query", "query has no letters or digits")
        }
        guard limit >= 1, limit <= Self.maxLimit else {
            throw GeoQueryError(.badLimit, field: "limit", "limit must be 1 to \(Self.maxLimit)")
        }
        guard within.isFinite, within >= 0 else {
            throw GeoQueryError(.badDistance, field: "within", "within must be a distance of 0 m or more")
        }
        let near = try near.map { (point) throws(GeoQueryError) in try GeoQueryError.checked(point, field: "near") }

        var best: [Int: Match] = [:]
        var entry = try lowerBound(folded)
        while entry < indexCount {
            let (order, exact) = try compare(entry: entry, with: folded)
            guard order == 0 else { break }
            let value = try index.uint32(at: entry * Self.entrySize + 4)
            let place = Int(value >> 2)
            guard place < count else {
                throw GeoDataReader.Error(.corrupt, "index entry \(entry) names place \(place)")
            }
            let startsName = value & 2 != 0
            let match: Match = startsName ? (exact ? .exact : .prefix) : .wordPrefix
            if best[place].map({ match < $0 }) ?? true { best[place] = match }
            entry += 1
        }

        var ranked: [(match: Match, distance: Double, population: Int, place: Int)] = []
        ranked.reserveCapacity(best.count)
        for (place, match) in best {
            var distance = 0.0
            if let near {
                distance = near.distance(to: try coordinate(at: place))
                if within > 0, distance > within { continue }
            }
            ranked.append((match, distance, try population(at: place), place))
        }
        ranked.sort {
            ($0.match.rawValue, $0.distance, -$0.population, $0.place)
                < ($1.match.rawValue, $1.distance, -$1.population, $1.place)
        }
        var results: [SearchResult] = []
        for candidate in ranked.prefix(limit) {
            results.append(
                SearchResult(
                    place: try place(at: candidate.place), match: candidate.match,
                    distance: near == nil ? nil : candidate.distance))
        }
        return results
    }

    /// The first index entry whose text is not less than `query`.
    private func lowerBound(_ query: [UInt8]) throws(GeoDataReader.Error) -> Int {
        var low = 0
        var high = indexCount
        while low < high {
            let mid = low + (high - low) / 2
            if try compare(entry: mid, with: query).order < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// -1 if the entry's text sorts before `query` and does not start with it,
    /// 0 if it starts with it (`exact` when equal), 1 if it sorts after.
    private func compare(entry: Int, with query: [UInt8]) throws(GeoDataReader.Error) -> (order: Int, exact: Bool) {
        let start = Int(try index.uint32(at: entry * Self.entrySize))
        // Folded strings end with a NUL within 255 bytes of their start.
        for (i, byte) in query.enumerated() {
            let text = try pool.uint8(at: start + i)
            if text == 0 { return (-1, false) }
            if text != byte { return (text < byte ? -1 : 1, false) }
            if i == 255 { throw GeoDataReader.Error(.corrupt, "index entry \(entry) has no end") }
        }
        return (0, try pool.uint8(at: start + query.count) == 0)
    }
}
