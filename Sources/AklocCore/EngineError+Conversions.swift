// Validation errors of the core's own types become request errors with the
// wire codes of DESIGN §3, keeping their human message.

extension CodedError where C == EngineErrorCode {
    public init(_ error: KeyPathError) {
        self.init(.unknownKeyPath, error.message)
    }

    public init(_ error: ThrottlePolicyError) {
        self.init(.badRequest, "invalid policy: \(error.message)")
    }
}
