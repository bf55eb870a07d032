import AklocCore

/// Which country a point is in (DESIGN §9: the country containing the
/// point, its land, else its territorial sea within 12 nautical miles of
/// its coast), from two sources (docs/geodata.md):
///
/// - the time zone, where its zone lies in one country
///   (data/zone-countries.tsv): timezone-boundary-builder follows
///   OpenStreetMap's borders and territorial seas, far more precisely than
///   Natural Earth's 1:10m borders, which are off by hundreds of metres;
/// - elsewhere (zones shared by several countries, the open sea) Natural
///   Earth 1:10m admin-0 (data/borders.bin, the overseas territories with
///   their own codes), and its nearest coast within 12 nautical miles.
public struct CountryBorders: Sendable {
    /// 12 nautical miles, in metres.
    public static let territorialSea = 22_224.0

    public struct Match: Hashable, Sendable {
        /// ISO 3166-1 alpha-2 (and XK for Kosovo, as Natural Earth has it).
        public var code: String
        /// Metres to Natural Earth's nearest coast when the point is off its
        /// land and within 12 nautical miles of it; nil on land (and in the
        /// rare stretch of a zone's territorial sea that reaches farther).
        public var distanceOffshore: Double?

        public init(code: String, distanceOffshore: Double? = nil) {
            self.code = code
            self.distanceOffshore = distanceOffshore
        }
    }

    /// Natural Earth's countries.
    public let index: PolygonIndex
    private let zones: TimeZoneBorders?
    /// The countries (`index` regions) each zone of `zones` may give, by
    /// zone index: one for a zone that lies in one country, a few for a
    /// shared zone, none for the open sea's.
    private let zoneCountries: [[Int]]

    /// `bytes` is data/borders.bin; with `zones` (data/timezones.bin) and
    /// `zoneCountries` (data/zone-countries.tsv) the zones' precise borders
    /// decide where they can. Throws `GeoDataReader.Error` for a damaged
    /// file, a table line that is not `Zone<TAB>XX[,YY…]`, or a code or zone
    /// the other files do not have.
    public init(
        _ bytes: UnsafeRawBufferPointer, zones: TimeZoneBorders? = nil, zoneCountries: UnsafeRawBufferPointer? = nil
    ) throws(GeoDataReader.Error) {
        index = try PolygonIndex(bytes)
        for name in index.names where !Self.isAlpha2(name) {
            throw GeoDataReader.Error(.corrupt, "borders region \(name.debugDescription) is not an alpha-2 code")
        }
        self.zones = zones
        guard let zones, let zoneCountries else {
            self.zoneCountries = []
            return
        }
        let zoneIndex = Dictionary(zones.index.names.enumerated().map { ($1, $0) }) { first, _ in first }
        let regionIndex = Dictionary(index.names.enumerated().map { ($1, $0) }) { first, _ in first }
        var table = [[Int]](repeating: [], count: zones.index.names.count)
        let text = String(decoding: zoneCountries, as: UTF8.self)
        guard text.utf8.elementsEqual(zoneCountries) else {
            throw GeoDataReader.Error(.corrupt, "zone countries are not UTF-8")
        }
        for (number, line) in text.split(separator: "\n").enumerated() where !line.hasPrefix("#") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            let codes =
                fields.count == 2 ? fields[1].split(separator: ",", omittingEmptySubsequences: false) : []
            let regions = codes.compactMap { regionIndex[String($0)] }
            guard fields.count == 2, let zone = zoneIndex[String(fields[0])], !codes.isEmpty,
                regions.count == codes.count
            else {
                throw GeoDataReader.Error(
                    .corrupt, "zone countries line \(number + 1): \(line.prefix(60).debugDescription)")
            }
            table[zone] = regions
        }
        self.zoneCountries = table
    }

    /// The country of a point, or nil beyond every territorial sea.
    /// Throws `GeoQueryError` (`badCoordinate`) for a latitude outside ±90,
    /// a longitude outside ±180 or a non-finite one, naming `field`;
    /// `GeoDataReader.Error` for a damaged file.
    public func country(at point: Coordinate, field: String = "coordinate") throws -> Match? {
        let point = try GeoQueryError.checked(point, field: field)
        let land = try index.firstRegion(containing: point)
        if let zones, let zone = try zones.index.firstRegion(containing: point), !zoneCountries[zone].isEmpty {
            let candidates = zoneCountries[zone]
            let code: String
            if candidates.count == 1 {
                code = index.names[candidates[0]]
            } else if let land, candidates.contains(land) {
                return Match(code: index.names[land])
            } else if let nearest = try index.nearestRegion(
                to: point, within: Self.candidateReach, among: { candidates.contains($0) })
            {
                // Natural Earth's land is a country the zone does not reach
                // (its border is off there), or the point is off its land:
                // the nearest country the zone may give.
                code = index.names[nearest.region]
            } else {
                code = index.names[candidates[0]]
            }
            if land != nil { return Match(code: code) }
            let coast = try index.nearestRegion(to: point, within: Self.territorialSea)
            return Match(code: code, distanceOffshore: coast?.distance)
        }
        if let land { return Match(code: index.names[land]) }
        guard let (region, distance) = try index.nearestRegion(to: point, within: Self.territorialSea) else {
            return nil
        }
        return Match(code: index.names[region], distanceOffshore: distance)
    }

    /// How far a shared zone's point looks for one of the zone's countries
    /// when Natural Earth's land there is another's: the zones reach 12 nm
    /// out to sea, and Natural Earth's borders are off by a few km at most.
    static let candidateReach = 50_000.0

    /// The country by Natural Earth alone (land, then the 12-mile sea).
    public func naturalEarthCountry(at point: Coordinate) throws -> Match? {
        try CountryBorders(index: index).country(at: point)
    }

    private init(index: PolygonIndex) {
        self.index = index
        zones = nil
        zoneCountries = []
    }

    static func isAlpha2(_ name: String) -> Bool {
        name.utf8.count == 2 && name.utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }
}
