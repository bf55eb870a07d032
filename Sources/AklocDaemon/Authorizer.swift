import AklocCore

/// Decides a connecting peer's authorization status and admin right (DESIGN §2).
///
/// Root is always `authorizedAlways`; then the `[authorization]` rule for the
/// user or their groups (see `Configuration.Authorization.rule`); then the
/// uid's stored answer to `requestAuthorization`; else `notDetermined`.
struct Authorizer: Sendable {
    var rules: Configuration.Authorization

    struct Identity: Sendable, Hashable {
        var uid: UInt32
        var userName: String?
        var groupNames: [String]
    }

    func status(for identity: Identity, decisions: [UInt32: AuthorizationStatus]) -> AuthorizationStatus {
        if identity.uid == 0 { return .authorizedAlways }
        if let rule = rules.rule(forUser: identity.userName ?? "#\(identity.uid)", groups: identity.groupNames) {
            return rule.status
        }
        return decisions[identity.uid] ?? .notDetermined
    }

    /// Whether this peer may pause, resume, reload and authorize.
    func isAdmin(_ identity: Identity) -> Bool {
        identity.uid == 0 || identity.groupNames.contains(rules.adminGroup)
    }

    /// What `requestAuthorization` grants a user without a rule.
    var defaultGrant: AuthorizationRequestType? {
        switch rules.defaultRule {
        case .always: .always
        case .whenInUse: .whenInUse
        case .deny: nil
        }
    }
}
