/// Why a `ThrottlePolicy` was rejected; `member` names the policy member.
public typealias ThrottlePolicyError = CodedError<ThrottlePolicyErrorCode>

/// The stable codes of `ThrottlePolicyError`.
public enum ThrottlePolicyErrorCode: String, CodedErrorCode {
    /// NaN or infinite.
    case notFinite
    case negative
    /// An interval beyond `ThrottlePolicy.intervalLimit`.
    case tooLarge
    case minAboveMax
}

/// A policy member, spelt as on the wire.
public enum ThrottlePolicyMember: String, Hashable, Sendable {
    case updateSpeed
    case minInterval
    case maxInterval
    case distanceFilter
    case desiredAccuracy
}

extension CodedError where C == ThrottlePolicyErrorCode {
    public typealias Member = ThrottlePolicyMember

    public init(_ code: C, _ member: Member, _ message: String) {
        self.init(code, message, subject: member.rawValue)
    }

    /// The member at fault.
    public var member: Member? { subject.flatMap(Member.init(rawValue:)) }
}
