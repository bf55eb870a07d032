/// Why an `Engine.Configuration` was rejected; `code` is stable.
public struct EngineConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable {
        /// `firstLocationAttempts` is 0 or negative.
        case invalidFirstLocationAttempts
        /// `maxFixAge` is not a finite, positive number of seconds.
        case invalidMaxFixAge
        /// `defaultPolicy` fails `ThrottlePolicy.validate()`.
        case invalidDefaultPolicy
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "invalid engine configuration (\(code.rawValue)): \(message)" }
}
