extension Location {
    /// One member as a key path value; unknown members are `.null`.
    public func value(of member: KeyPath.Member) -> KeyPathValue {
        func number(_ value: Double?) -> KeyPathValue { value.map(KeyPathValue.number) ?? .null }
        switch member {
        case .coordinate: return .coordinate(latitude: latitude, longitude: longitude)
        case .latitude: return .number(latitude)
        case .longitude: return .number(longitude)
        case .altitude: return number(altitude)
        case .ellipsoidalAltitude: return number(ellipsoidalAltitude)
        case .horizontalAccuracy: return number(horizontalAccuracy)
        case .verticalAccuracy: return number(verticalAccuracy)
        case .speed: return number(speed)
        case .speedAccuracy: return number(speedAccuracy)
        case .course: return number(course)
        case .courseAccuracy: return number(courseAccuracy)
        case .climb: return number(climb)
        case .mode: return .string(mode.rawValue)
        case .timestamp: return timestamp.map(KeyPathValue.time) ?? .null
        case .receivedAt: return receivedAt.map(KeyPathValue.time) ?? .null
        case .device: return device.map(KeyPathValue.string) ?? .null
        case .fixStatus: return fixStatus.map { .string($0.rawValue) } ?? .null
        case .satellitesUsed: return number(satellitesUsed.map(Double.init))
        case .hdop: return number(hdop)
        }
    }
}
