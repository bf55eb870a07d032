import AklocCore

/// What the daemon runs by: the configuration in force and what follows
/// from it (the authorizer, the names it looked up), and what was fixed at
/// start. A reload replaces `configuration` and `authorizer` together.
struct DaemonSettings {
    var configuration: Configuration
    var authorizer: Authorizer
    var users = UserDatabase()
    let options: DaemonOptions
    let configPath: String?
    /// The socket served when not activated; fixed at start, so a reload
    /// that changes `[socket] path` cannot make `stop` unlink another file.
    let socketPath: String
    /// Whether systemd passed the listening socket.
    var activated = false

    init(configuration: Configuration, options: DaemonOptions, configPath: String?) {
        self.configuration = configuration
        authorizer = Authorizer(rules: configuration.authorization)
        self.options = options
        self.configPath = configPath
        socketPath = options.socketPath ?? configuration.socket.path
    }

    /// Who a peer is, as far as the authorizer needs to know: names and groups
    /// from NSS, except for the uids it decides by number (root).
    mutating func identity(uid: UInt32, gid: UInt32) -> Authorizer.Identity {
        guard Authorizer.needsNames(uid) else { return Authorizer.Identity(uid: uid, userName: nil, groupNames: []) }
        return users.identity(uid: uid, gid: gid)
    }

    /// What akloc's rules give a uid that cannot ask (a feature's user peer,
    /// such as a D-Bus client): a uid without a rule or a stored answer gets
    /// what `[authorization] default` would grant it, without storing it
    /// (GeoClue would ask its agent here).
    mutating func grantedStatus(
        uid: UInt32, gid: UInt32, decisions: [UInt32: AuthorizationStatus]
    ) -> AuthorizationStatus {
        let status = authorizer.status(for: identity(uid: uid, gid: gid), decisions: decisions)
        guard status == .notDetermined else { return status }
        switch authorizer.defaultGrant {
        case .always: return .authorizedAlways
        case .whenInUse: return .authorizedWhenInUse
        case nil: return .denied
        }
    }
}
