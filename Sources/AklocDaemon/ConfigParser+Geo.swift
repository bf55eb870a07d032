import AklocGeoService

/// `[geo]` keys (docs/configuration.md, docs/places.md).
extension ConfigParser.State {
    mutating func assignGeo(_ field: ConfigParser.Field) throws(ConfigError) {
        switch field.key {
        case "data-dir":
            configuration.geo.dataDirectory = try field.absolutePath(
                expected: "an absolute directory path holding places.bin, borders.bin and timezones.bin",
                maximumBytes: 4000)
        default:
            throw unknownKey(field)
        }
    }
}
