// Policies arrive from clients and config files with any member left out, so
// decoding fills defaults and then validates: a decoded policy is always usable.

extension ThrottlePolicy: Codable {
    private enum CodingKeys: String, CodingKey {
        case updateSpeed
        case minInterval
        case maxInterval
        case distanceFilter
        case desiredAccuracy
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init()
        updateSpeed = try container.decodeIfPresent(Double.self, forKey: .updateSpeed) ?? updateSpeed
        minInterval = try container.decodeIfPresent(Double.self, forKey: .minInterval) ?? minInterval
        maxInterval = try container.decodeIfPresent(Double.self, forKey: .maxInterval) ?? maxInterval
        distanceFilter = try container.decodeIfPresent(Double.self, forKey: .distanceFilter) ?? distanceFilter
        desiredAccuracy = try container.decodeIfPresent(Double.self, forKey: .desiredAccuracy) ?? desiredAccuracy
        do {
            try validate()
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.message, underlyingError: error))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(updateSpeed, forKey: .updateSpeed)
        try container.encode(minInterval, forKey: .minInterval)
        try container.encode(maxInterval, forKey: .maxInterval)
        try container.encode(distanceFilter, forKey: .distanceFilter)
        try container.encode(desiredAccuracy, forKey: .desiredAccuracy)
    }
}
