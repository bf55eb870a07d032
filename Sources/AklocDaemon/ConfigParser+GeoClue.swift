import AklocGeoClue

/// `[geoclue]` keys (docs/configuration.md, docs/desktop.md).
extension ConfigParser.State {
    mutating func assignGeoClue(_ field: ConfigParser.Field) throws(ConfigError) {
        switch field.key {
        case "enable":
            configuration.geoclue.enabled = try field.boolean()
        case "nmea-socket":
            configuration.geoclue.nmeaSocket = try field.socketPath()
        case "nmea-socket-mode":
            configuration.geoclue.nmeaSocketMode = try field.octalMode()
        default:
            throw unknownKey(field)
        }
    }
}
