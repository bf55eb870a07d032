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

    public init(_ code: C, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(message) [\(code.rawValue)]" }
}
