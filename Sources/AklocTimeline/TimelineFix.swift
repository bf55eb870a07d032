import AklocCore
import AklocProtocol

/// One fix as the visit detector sees it: when (the wall clock of receipt,
/// as the track journal selects points), where, and how well.
public struct TimelineFix: Hashable, Sendable {
    /// Seconds since 1970, with fractions.
    public var time: Double
    public var latitude: Double
    public var longitude: Double
    /// Metres (95 %), when the receiver said.
    public var accuracy: Double?
    /// Metres per second, when the receiver said.
    public var speed: Double?

    public init(time: Double, latitude: Double, longitude: Double, accuracy: Double? = nil, speed: Double? = nil) {
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        self.speed = speed
    }

    /// A recorded point: its receipt time (the receiver's own when there is none).
    public init?(_ point: TrackPoint) {
        let location = point.location
        guard let time = location.receivedAt ?? location.timestamp else { return nil }
        self.init(
            time: Double(time.secondsSince1970) + Double(time.nanoseconds) / 1e9, latitude: location.latitude,
            longitude: location.longitude, accuracy: location.horizontalAccuracy, speed: location.speed)
    }

    public var fixTime: FixTime { Self.fixTime(time) }

    public static func fixTime(_ seconds: Double) -> FixTime {
        let whole = seconds.rounded(.down)
        return FixTime(
            secondsSince1970: Int64(whole), nanoseconds: Int32(min(999_999_999, ((seconds - whole) * 1e9).rounded())))
    }

    func distance(to other: TimelineFix) -> Double {
        Location.distance(
            latitude: latitude, longitude: longitude, toLatitude: other.latitude, longitude: other.longitude)
    }
}
