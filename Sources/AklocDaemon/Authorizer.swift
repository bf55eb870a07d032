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

    /// Whether deciding for `uid` needs its user and group names. Root's
    /// status and admin right follow from its uid alone, so its names are never
    /// looked up: the group lookup is what loads NSS's other modules (Debian's
    /// `group: files systemd` brings libnss_systemd, 0.2 MiB, into aklocd).
    static func needsNames(_ uid: UInt32) -> Bool {
        uid != 0
    }

    func status(for identity: Identity, decisions: [UInt32: AuthorizationStatus]) -> AuthorizationStatus {
        if !Authorizer.needsNames(identity.uid) { return .authorizedAlways }
        if let rule = rules.rule(forUser: identity.userName ?? "#\(identity.uid)", groups: identity.groupNames) {
            return rule.status
        }
        return decisions[identity.uid] ?? .notDetermined
    }

    /// Whether this peer may pause, resume, reload and authorize.
    func isAdmin(_ identity: Identity) -> Bool {
        !Authorizer.needsNames(identity.uid) || identity.groupNames.contains(rules.adminGroup)
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
