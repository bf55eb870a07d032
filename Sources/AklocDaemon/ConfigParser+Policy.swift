import AklocCore
import AklocMQTT
import AklocTrack

/// The throttle-policy keys, parsed once for every section that has a
/// policy (`[throttle]`, `[mqtt]`, `[track]`), with the same bounds (the
/// intervals capped at `ThrottlePolicy.intervalLimit` everywhere) and one
/// check that min-interval is not above max-interval. `[track]` spells two
/// of them its own way (`distance`, `heartbeat`).
extension ConfigParser.State {
    enum PolicyKey {
        case updateSpeed, minInterval, maxInterval, distanceFilter, desiredAccuracy
    }

    /// The policy keys a section has, by their names there.
    static func policyKeys(of section: String) -> [String: PolicyKey] {
        switch section {
        case "throttle":
            [
                "update-speed": .updateSpeed, "min-interval": .minInterval, "max-interval": .maxInterval,
                "distance-filter": .distanceFilter, "desired-accuracy": .desiredAccuracy,
            ]
        case "mqtt":
            [
                "update-speed": .updateSpeed, "min-interval": .minInterval, "max-interval": .maxInterval,
                "distance-filter": .distanceFilter,
            ]
        case "track": ["min-interval": .minInterval, "distance": .distanceFilter, "heartbeat": .maxInterval]
        default: [:]
        }
    }

    /// Sets one member of `policy` when the field is one of its section's
    /// policy keys; false when it is not (the section's own keys then).
    func assignPolicy(_ field: ConfigParser.Field, to policy: inout ThrottlePolicy) throws(ConfigError) -> Bool {
        guard let key = Self.policyKeys(of: field.section)[field.key] else { return false }
        switch key {
        case .updateSpeed:
            policy.updateSpeed = try field.real(minimum: 0, expected: "a speed in metres per second >= 0")
        case .minInterval:
            policy.minInterval = try field.real(
                minimum: 0, maximum: ThrottlePolicy.intervalLimit, expected: "a number of seconds >= 0")
        case .maxInterval:
            policy.maxInterval = try field.real(
                minimum: 0, maximum: ThrottlePolicy.intervalLimit,
                expected: field.section == "track"
                    ? "a number of seconds >= 0 (a point at least this often while still)" : "a number of seconds >= 0")
        case .distanceFilter:
            policy.distanceFilter = try field.real(
                minimum: 0,
                expected: field.section == "track"
                    ? "a distance in metres >= 0 (0 = every min-interval)" : "a distance in metres >= 0 (0 = off)")
        case .desiredAccuracy:
            policy.desiredAccuracy = try field.real(minimum: 0, expected: "an accuracy in metres >= 0 (0 = off)")
        }
        return true
    }

    func checkIntervals() throws(ConfigError) {
        try checkIntervals(configuration.throttle.policy, section: "throttle")
        try checkIntervals(configuration.mqtt.policy, section: "mqtt")
        try checkIntervals(configuration.track.policy, section: "track")
    }

    private func checkIntervals(_ policy: ThrottlePolicy, section: String) throws(ConfigError) {
        guard policy.minInterval > policy.maxInterval else { return }
        let keys = Self.policyKeys(of: section)
        let minName = keys.first { $0.value == .minInterval }!.key
        let maxName = keys.first { $0.value == .maxInterval }!.key
        let minLine = seen["\(section).\(minName)"]
        let maxLine = seen["\(section).\(maxName)"]
        // Blame the line written last: that is the likelier edit.
        let blameMax = (maxLine ?? 0) > (minLine ?? 0)
        throw ConfigError(
            .conflictingValues, path: path, line: blameMax ? maxLine : minLine, section: section,
            key: blameMax ? maxName : minName,
            message: "expected \(minName) <= \(maxName), got \(minName) \(format(policy.minInterval))"
                + "\(minLine == nil ? " (default)" : "") > \(maxName) \(format(policy.maxInterval))"
                + "\(maxLine == nil ? " (default)" : "")")
    }

    private func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
