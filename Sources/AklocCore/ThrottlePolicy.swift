/// Per-subscriber throttle settings (DESIGN §2).
public struct ThrottlePolicy: Hashable, Sendable, Codable {
    public var updateSpeed: Double = 0.4
    public var minInterval: Double = 5
    public var maxInterval: Double = 300
    public var distanceFilter: Double = 0
    public var desiredAccuracy: Double = 0

    public init() {}
}
