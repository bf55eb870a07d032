extension Engine.Request {
    // A whole `ThrottlePolicy` is a partial one with every member given.
    // These keep requests built from whole policies (the client library's
    // settings, tests) reading as before; disfavoured, so `policy: nil`
    // and `.init(minInterval:)` still mean the cases themselves.

    @_disfavoredOverload
    public static func startUpdatingLocation(policy: ThrottlePolicy?, everyEpoch: Bool) -> Self {
        .startUpdatingLocation(policy: policy.map(ThrottlePolicy.Partial.init), everyEpoch: everyEpoch)
    }

    @_disfavoredOverload
    public static func observe(_ keyPath: KeyPath, initial: Bool, old: Bool, policy: ThrottlePolicy?) -> Self {
        .observe(keyPath, initial: initial, old: old, policy: policy.map(ThrottlePolicy.Partial.init))
    }

    @_disfavoredOverload
    public static func configure(_ policy: ThrottlePolicy) -> Self {
        .configure(ThrottlePolicy.Partial(policy))
    }
}
