import AklocGeoClue

/// `[geoclue]` keys (docs/configuration.md, docs/desktop.md).
extension ConfigParser.State {
    mutating func assignGeoClue(_ field: ConfigParser.Field) throws(ConfigError) {
        switch field.key {
        case "enable":
            configuration.geoclue.enabled = try field.boolean()
        case "nmea-socket":
            // sun_path holds 108 bytes including the terminating NUL.
            configuration.geoclue.nmeaSocket = try field.absolutePath(
                expected: "an absolute socket path of at most 107 bytes", maximumBytes: 107)
        case "nmea-socket-mode":
            configuration.geoclue.nmeaSocketMode = try field.octalMode()
        default:
            throw unknownKey(field)
        }
    }
}
