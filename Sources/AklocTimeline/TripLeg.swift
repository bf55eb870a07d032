/// The trip under way, summed fix by fix: distance along the fixes, moving
/// time, top speed, a gap that moved, and a sample of points every
/// `sampleSpacing` metres for the countries it crossed.
struct TripLeg: Hashable, Sendable {
    /// Longer than this between two fixes is a gap: the path there is unknown.
    static let gap = 120.0
    /// Faster than this between two fixes counts as moving (m/s).
    static let movingSpeed = 0.5
    /// Metres between the points kept for the country lookups.
    static let sampleSpacing = 2_000.0

    /// Metres a fix must move from the last counted one to add distance.
    static let minimumStep = 20.0

    let start: TimelineFix
    private(set) var last: TimelineFix
    /// The last fix that added distance.
    private var counted: TimelineFix
    private(set) var distance = 0.0
    private(set) var movingTime = 0.0
    private(set) var maxSpeed = 0.0
    private(set) var unknownPath = false
    private(set) var samples: [TimelineFix]
    /// Arrival of the visit it left (nil: the fixes began on the move).
    let from: Double?

    init(start: TimelineFix, from: Double?) {
        self.start = start
        last = start
        counted = start
        samples = [start]
        self.from = from
        maxSpeed = start.speed ?? 0
    }

    mutating func add(_ fix: TimelineFix) {
        let seconds = fix.time - last.time
        // Distance counts from the last fix that moved clearly (by more than
        // twice its accuracy, 20 m at least): a stop's jitter adds nothing.
        let step = counted.distance(to: fix)
        let moved = step >= max(Self.minimumStep, 2 * (fix.accuracy ?? 0))
        if moved {
            distance += step
            let stepSeconds = fix.time - counted.time
            if fix.speed == nil, stepSeconds >= 1, stepSeconds <= Self.gap {
                maxSpeed = max(maxSpeed, step / stepSeconds)
            }
            counted = fix
        }
        if seconds > Self.gap {
            if moved { unknownPath = true }
        } else if seconds > 0, fix.speed.map({ $0 > Self.movingSpeed }) ?? moved {
            movingTime += seconds
        }
        if let speed = fix.speed { maxSpeed = max(maxSpeed, speed) }
        if let sampled = samples.last, sampled.distance(to: fix) >= Self.sampleSpacing { samples.append(fix) }
        last = fix
    }

    /// The trip as it stands, ending at its last fix.
    var summary: TripSummary {
        var points = samples
        if points.last != last { points.append(last) }
        return TripSummary(
            start: start.time, end: last.time, from: from, distance: distance, movingTime: movingTime,
            maxSpeed: maxSpeed, unknownPath: unknownPath,
            samples: points.map { (latitude: $0.latitude, longitude: $0.longitude) })
    }
}

/// A trip as the detector found it (the feature adds its visits and countries).
public struct TripSummary: Sendable {
    /// Seconds since 1970.
    public var start: Double
    public var end: Double
    /// Arrival of the visit it left; nil when the fixes began on the move.
    public var from: Double?
    /// Arrival of the visit it reached; nil while under way.
    public var to: Double?
    public var distance: Double
    public var movingTime: Double
    public var maxSpeed: Double
    public var unknownPath: Bool
    /// Its first and last fix, and one every 2 km between.
    public var samples: [(latitude: Double, longitude: Double)]
}
