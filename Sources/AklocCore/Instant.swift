/// A point on the monotonic clock, in nanoseconds since an arbitrary origin.
///
/// All throttling runs on receipt time, never on a fix's own time: gpsd 3.22
/// shifts many receivers' dates by 1024 GPS weeks, and the wall clock can jump.
/// Tests build instants by hand, which is how the core gets a manual clock.
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    public static func seconds(_ seconds: Double) -> Instant {
        Instant(nanoseconds: Int64((seconds * 1e9).rounded()))
    }

    public static let zero = Instant(nanoseconds: 0)

    /// Seconds since the clock's origin.
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    public func advanced(bySeconds seconds: Double) -> Instant {
        Instant(nanoseconds: nanoseconds &+ Int64((seconds * 1e9).rounded()))
    }

    /// Elapsed seconds from `earlier` to `self`.
    public func seconds(since earlier: Instant) -> Double {
        Double(nanoseconds &- earlier.nanoseconds) / 1e9
    }

    public static func < (lhs: Instant, rhs: Instant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    public var description: String { "\(seconds)s" }
}
