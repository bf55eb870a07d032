/// Why a key path string was rejected. The code is the wire's `unknownKeyPath`.
public typealias KeyPathError = CodedError<KeyPathErrorCode>

/// The stable codes of `KeyPathError`.
public enum KeyPathErrorCode: String, CodedErrorCode {
    case unknownKeyPath
}

extension CodedError where C == KeyPathErrorCode {
    /// The only code there is today.
    public init(_ message: String) {
        self.init(.unknownKeyPath, message)
    }
}
