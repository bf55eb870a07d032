import AklocCore
import AklocProtocol

/// `akloc track stats`: per segment, the distance along the points, the
/// duration from first to last, the moving time (intervals at 0.5 m/s or
/// more, by the distance covered or the receiver's speed), and the maximum
/// speed (the receiver's, else the fastest interval). Times are the
/// receiver's, as in the exports.
struct TrackStatistics {
    struct Segment {
        var number: UInt64
        var points = 0
        var distance = 0.0
        var start: FixTime?
        var end: FixTime?
        var moving = 0.0
        var maxSpeed = 0.0
        var last: Location?
    }

    /// Slower than this counts as standing still (GPS jitter of a parked receiver).
    static let movingSpeed = 0.5

    private(set) var segments: [Segment] = []

    mutating func add(_ point: TrackPoint) {
        if segments.last?.number != point.segment { segments.append(Segment(number: point.segment)) }
        let location = point.location
        let time = location.timestamp ?? location.receivedAt
        var segment = segments[segments.count - 1]
        segment.points += 1
        if let speed = location.speed { segment.maxSpeed = max(segment.maxSpeed, speed) }
        if let last = segment.last {
            let step = location.distance(to: last)
            segment.distance += step
            if let time, let previous = segment.end {
                let seconds = Self.seconds(from: previous, to: time)
                if seconds > 0 {
                    let speed = step / seconds
                    if location.speed == nil { segment.maxSpeed = max(segment.maxSpeed, speed) }
                    if speed >= Self.movingSpeed || (location.speed ?? 0) >= Self.movingSpeed {
                        segment.moving += seconds
                    }
                }
            }
        }
        if segment.start == nil { segment.start = time }
        if let time { segment.end = time }
        segment.last = location
        segments[segments.count - 1] = segment
    }

    static func seconds(from start: FixTime, to end: FixTime) -> Double {
        Double(end.secondsSince1970 - start.secondsSince1970) + Double(end.nanoseconds - start.nanoseconds) / 1e9
    }

    func table() -> String {
        guard !segments.isEmpty else { return "no points recorded in that time\n" }
        var text = "segment  points  start                     distance     duration     moving       max speed\n"
        func row(
            _ label: String, _ points: Int, _ start: FixTime?, _ distance: Double, _ duration: Double,
            _ moving: Double, _ maxSpeed: Double
        ) {
            func pad(_ value: String, _ width: Int) -> String {
                value + String(repeating: " ", count: max(1, width - value.count))
            }
            text +=
                pad(label, 9) + pad(String(points), 8) + pad(start?.iso8601 ?? "-", 26)
                + pad("\(Formatting.fixed(distance / 1000, 3)) km", 13) + pad(Formatting.duration(duration), 13)
                + pad(Formatting.duration(moving), 13) + "\(Formatting.fixed(maxSpeed, 1)) m/s\n"
        }
        var total = (points: 0, distance: 0.0, duration: 0.0, moving: 0.0, maxSpeed: 0.0)
        for segment in segments {
            let duration = segment.start.flatMap { start in segment.end.map { Self.seconds(from: start, to: $0) } } ?? 0
            row(
                String(segment.number), segment.points, segment.start, segment.distance, duration, segment.moving,
                segment.maxSpeed)
            total.points += segment.points
            total.distance += segment.distance
            total.duration += duration
            total.moving += segment.moving
            total.maxSpeed = max(total.maxSpeed, segment.maxSpeed)
        }
        row("total", total.points, segments.first?.start, total.distance, total.duration, total.moving, total.maxSpeed)
        return text
    }
}
