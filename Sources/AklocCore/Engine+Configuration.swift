extension Engine.Configuration {
    /// The longest `maxFixAge` accepted: a day, past any sensible value.
    public static let maxFixAgeLimit: Double = 86_400

    /// Throws the first problem found. The shell calls this on the config file
    /// it parsed; the engine itself tolerates bad values (treating attempts
    /// below 1 as 1) rather than crash a running daemon.
    public func validate() throws(EngineConfigurationError) {
        guard firstLocationAttempts >= 1 else {
            throw EngineConfigurationError(
                .invalidFirstLocationAttempts,
                "firstLocationAttempts must be at least 1 (got \(firstLocationAttempts))")
        }
        guard maxFixAge.isFinite, maxFixAge > 0, maxFixAge <= Self.maxFixAgeLimit else {
            throw EngineConfigurationError(
                .invalidMaxFixAge,
                "maxFixAge must be a number of seconds above 0 and at most \(Int(Self.maxFixAgeLimit)) (got \(maxFixAge))"
            )
        }
        do {
            try defaultPolicy.validate()
        } catch {
            throw EngineConfigurationError(.invalidDefaultPolicy, "default policy: \(error.message)")
        }
    }
}
