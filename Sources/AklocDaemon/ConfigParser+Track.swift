import AklocTrack

/// `[track]` keys (docs/track.md, docs/configuration.md).
extension ConfigParser.State {
    mutating func assignTrack(_ field: ConfigParser.Field) throws(ConfigError) {
        switch field.key {
        case "enable":
            configuration.track.enabled = try field.boolean()
        case "retention-days":
            configuration.track.retentionDays = try field.integer(in: 1...36_500, expected: "a number of days 1-36500")
        case "max-size":
            configuration.track.maxSize = try field.size(
                in: 65536...(64 << 30),
                expected: "a size in bytes from 64K to 64G (suffixes K, M, G are powers of 1024)")
        case "sync-interval":
            configuration.track.syncInterval = try field.real(
                minimum: 0, expected: "a number of seconds >= 0 (0 = sync every point)")
        default:
            throw unknownKey(field)
        }
    }
}
