/// Which country a point is in: data/borders.bin (Natural Earth 1:10m
/// admin-0, with the overseas territories given their own codes; see
/// docs/geodata.md). DESIGN §9: the country containing the point, its land,
/// else its territorial sea within 12 nautical miles of its coast.
public struct CountryBorders: Sendable {
    /// 12 nautical miles, in metres.
    public static let territorialSea = 22_224.0

    public struct Match: Hashable, Sendable {
        /// ISO 3166-1 alpha-2 (and XK for Kosovo, as Natural Earth has it).
        public var code: String
        /// Metres to the coast when the point is at sea, nil on land.
        public var distanceOffshore: Double?
    }

    public let index: PolygonIndex

    public init(_ bytes: UnsafeRawBufferPointer) throws(GeoDataReader.Error) {
        index = try PolygonIndex(bytes)
        for name in index.names where !Self.isAlpha2(name) {
            throw GeoDataReader.Error(.corrupt, "borders region \(name.debugDescription) is not an alpha-2 code")
        }
    }

    /// The country of a point, or nil beyond every territorial sea.
    /// Throws `GeoQueryError` (`badCoordinate`) for a latitude outside ±90,
    /// a longitude outside ±180 or a non-finite one, naming `field`.
    public func country(at point: Coordinate, field: String = "coordinate") throws -> Match? {
        let point = try GeoQueryError.checked(point, field: field)
        if let region = try index.firstRegion(containing: point) {
            return Match(code: index.names[region])
        }
        guard let (region, distance) = try index.nearestRegion(to: point, within: Self.territorialSea) else {
            return nil
        }
        return Match(code: index.names[region], distanceOffshore: distance)
    }

    static func isAlpha2(_ name: String) -> Bool {
        name.utf8.count == 2 && name.utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }
}
