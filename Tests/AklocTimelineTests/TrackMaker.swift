import AklocCore
import AklocTimeline

/// Synthetic tracks for the detector's tests: stays with jitter, walks and
/// drives between them, gaps and wild fixes, on a seeded generator.
struct TrackMaker {
    var fixes: [TimelineFix] = []
    var time: Double
    var latitude: Double
    var longitude: Double
    var random: SplitMix

    init(start: Double = 1_780_000_000, latitude: Double = 52.37, longitude: Double = 4.89, seed: UInt64 = 1) {
        time = start
        self.latitude = latitude
        self.longitude = longitude
        random = SplitMix(seed: seed)
    }

    static let metresPerDegree = Location.earthRadius * Double.pi / 180

    /// Metres east and north of the current point, as degrees.
    func offset(east: Double, north: Double) -> (Double, Double) {
        (
            latitude + north / Self.metresPerDegree,
            longitude + east / (Self.metresPerDegree * Trigonometry.cos(latitude * Double.pi / 180))
        )
    }

    mutating func fix(east: Double = 0, north: Double = 0, accuracy: Double? = 8, speed: Double? = nil) {
        let (lat, lon) = offset(east: east, north: north)
        fixes.append(TimelineFix(time: time, latitude: lat, longitude: lon, accuracy: accuracy, speed: speed))
    }

    /// Still for `seconds`, a fix every `every` seconds, jittering up to `jitter` metres.
    mutating func stay(_ seconds: Double, every: Double = 1, jitter: Double = 6) {
        var elapsed = 0.0
        while elapsed < seconds {
            fix(
                east: random.uniform(-jitter, jitter), north: random.uniform(-jitter, jitter),
                speed: random.uniform(0, 0.3))
            time += every
            elapsed += every
        }
    }

    /// Straight east (or at `bearing` degrees) for `metres` at `speed` m/s, a fix every `every` seconds.
    mutating func move(_ metres: Double, speed: Double, every: Double = 1, bearing: Double = 90) {
        let step = speed * every
        var done = 0.0
        let radians = bearing * Double.pi / 180
        while done < metres {
            let advance = min(step, metres - done)
            (latitude, longitude) = offset(
                east: advance * Trigonometry.sin(radians), north: advance * Trigonometry.cos(radians))
            done += advance
            time += every * advance / step
            fix(speed: speed)
        }
        time += every
    }

    /// No fixes for `seconds`.
    mutating func gap(_ seconds: Double) { time += seconds }

    /// Jumps (no fixes between) `metres` east.
    mutating func jump(_ metres: Double) { (latitude, longitude) = offset(east: metres, north: 0) }
}

/// A small seeded generator (SplitMix64), so every failure replays.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func uniform(_ low: Double, _ high: Double) -> Double {
        low + (high - low) * Double(next() >> 11) / Double(1 << 53)
    }
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
}

func timeline(_ fixes: [TimelineFix], settings: TimelineSettings = TimelineSettings()) -> (
    visits: [DetectedVisit], trips: [TripSummary]
) {
    var builder = TimelineBuilder(settings: settings)
    for fix in fixes { builder.add(fix) }
    return builder.result
}
