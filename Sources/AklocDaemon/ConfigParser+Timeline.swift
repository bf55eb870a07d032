import AklocTimeline

/// `[timeline]` keys (docs/timeline.md, docs/configuration.md).
extension ConfigParser.State {
    mutating func assignTimeline(_ field: ConfigParser.Field) throws(ConfigError) {
        let radius = TimelineSettings.radiusRange
        let time = TimelineSettings.minimumTimeRange
        switch field.key {
        case "radius":
            configuration.timeline.radius = try field.real(
                minimum: radius.lowerBound, maximum: radius.upperBound,
                expected: "a radius in metres of at least \(Int(radius.lowerBound))")
        case "min-time":
            configuration.timeline.minimumTime = try field.real(
                minimum: time.lowerBound, maximum: time.upperBound,
                expected: "a number of seconds of at least \(Int(time.lowerBound))")
        default:
            throw unknownKey(field)
        }
    }
}
