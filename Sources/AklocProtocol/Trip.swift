import AklocCore
import AklocJSON

/// The way from one visit to the next (DESIGN §15): when, how far along the
/// track, how fast, through which countries.
public struct Trip: Hashable, Sendable {
    public var start: FixTime
    public var end: FixTime
    /// The visit it left (nil when the fixes began on the move).
    public var from: Visit?
    /// The visit it reached (nil while under way, or when the fixes end on the move).
    public var to: Visit?
    /// Metres along the fixes (straight across a gap).
    public var distance: Double
    /// Seconds between fixes that moved (over 0.5 m/s), gaps left out.
    public var movingTime: Double
    /// Metres per second: the fastest the receiver reported (or, without
    /// its speeds, the fastest between two fixes).
    public var maxSpeed: Double
    /// Alpha-2 codes of the countries the fixes passed through, in order.
    public var countries: [String]
    /// A gap in the fixes (the receiver off, a tunnel) that moved: the path
    /// there is not known, and `distance` counts it straight.
    public var unknownPath: Bool

    public init(
        start: FixTime, end: FixTime, from: Visit? = nil, to: Visit? = nil, distance: Double, movingTime: Double,
        maxSpeed: Double, countries: [String] = [], unknownPath: Bool = false
    ) {
        self.start = start
        self.end = end
        self.from = from
        self.to = to
        self.distance = distance
        self.movingTime = movingTime
        self.maxSpeed = maxSpeed
        self.countries = countries
        self.unknownPath = unknownPath
    }

    /// Seconds from start to end.
    public var duration: Double {
        Double(end.secondsSince1970 - start.secondsSince1970) + Double(end.nanoseconds - start.nanoseconds) / 1e9
    }

    /// Metres per second over the whole duration.
    public var averageSpeed: Double { duration > 0 ? distance / duration : 0 }

    /// The wire form (docs/protocol.md, `trips`).
    public var json: JSONValue {
        func rounded(_ value: Double, _ scale: Double) -> JSONValue { .double((value * scale).rounded() / scale) }
        var members: [String: JSONValue] = [
            "start": .string(start.iso8601), "end": .string(end.iso8601),
            "distance": rounded(distance, 1), "duration": rounded(duration, 1000),
            "movingTime": rounded(movingTime, 1000), "maxSpeed": rounded(maxSpeed, 100),
            "averageSpeed": rounded(averageSpeed, 100), "countries": .array(countries.map(JSONValue.string)),
            "unknownPath": .bool(unknownPath),
        ]
        members["from"] = from.map(\.json) ?? .null
        members["to"] = to.map(\.json) ?? .null
        return .object(members)
    }
}
