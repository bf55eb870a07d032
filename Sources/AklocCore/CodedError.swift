/// The codes of one kind of `CodedError`: an enum of stable names.
public protocol CodedErrorCode: RawRepresentable<String>, Hashable, Sendable {}

/// The one shape of an error with a stable code, as swift-service-lifecycle's
/// ServiceGroupError has one: the code is what logs, scripts and tests match
/// on and never changes; the message is for people. Every kind prints one
/// way, `message [code]`. A kind is an enum of codes and a typealias
/// (`TrackError = CodedError<TrackErrorCode>`); `TrackError.Code` names the enum.
public struct CodedError<C: CodedErrorCode>: Error, Hashable, Sendable, CustomStringConvertible {
    public typealias Code = C

    public var code: C
    public var message: String
    /// The one input the error is about, when there is one, spelt as the
    /// input spells it: a request member (`near`), a policy member
    /// (`minInterval`). What a wire error names; not printed (the message
    /// says it in words).
    public var subject: String?

    public init(_ code: C, _ message: String, subject: String? = nil) {
        self.code = code
        self.message = message
        self.subject = subject
    }

    public var description: String { "\(message) [\(code.rawValue)]" }
}
