/// Why a `ThrottlePolicy` was rejected. `code` is stable (it may reach logs and
/// scripts); `message` is for people.
public struct ThrottlePolicyError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable {
        /// NaN or infinite.
        case notFinite
        case negative
        /// An interval beyond `ThrottlePolicy.intervalLimit`.
        case tooLarge
        case minAboveMax
    }

    /// The policy member at fault, spelt as on the wire.
    public enum Member: String, Hashable, Sendable {
        case updateSpeed
        case minInterval
        case maxInterval
        case distanceFilter
        case desiredAccuracy
    }

    public var code: Code
    public var member: Member
    public var message: String

    public init(_ code: Code, _ member: Member, _ message: String) {
        self.code = code
        self.member = member
        self.message = message
    }

    public var description: String { "invalid throttle policy (\(code.rawValue)): \(message)" }
}
