/// Why an `Engine.Configuration` was rejected.
public typealias EngineConfigurationError = CodedError<EngineConfigurationErrorCode>

/// The stable codes of `EngineConfigurationError`.
public enum EngineConfigurationErrorCode: String, CodedErrorCode {
    /// `firstLocationAttempts` is 0 or negative.
    case invalidFirstLocationAttempts
    /// `maxFixAge` is not a finite, positive number of seconds.
    case invalidMaxFixAge
    /// `defaultPolicy` fails `ThrottlePolicy.validate()`.
    case invalidDefaultPolicy
}
