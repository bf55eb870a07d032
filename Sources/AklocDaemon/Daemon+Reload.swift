import AklocCore
import AklocPosix
import AklocProtocol

extension Daemon {
    /// SIGHUP or `reload`: re-reads the config without dropping anyone. A bad
    /// file is refused with its file:line reason and the running config stays.
    @discardableResult
    func reload() -> Result<Void, ProtocolError> {
        service.reloading()
        defer { service.readyAgain() }
        let loaded: ConfigParser.Loaded
        do {
            loaded = try ConfigParser.load(explicitPath: settings.configPath)
        } catch {
            log(.error, "reload refused, keeping the running config: \(error)")
            return .failure(ProtocolError(.badRequest, "reload refused: \(error)"))
        }
        // What start-up checks, reload checks too.
        do {
            try Daemon.engineConfiguration(loaded.configuration).validate()
        } catch {
            log(.error, "reload refused, keeping the running config: \(loaded.path): \(error)")
            return .failure(ProtocolError(.badRequest, "reload refused: \(loaded.path): \(error)"))
        }
        apply(loaded.configuration)
        log(.notice, "configuration reloaded from \(loaded.path)")
        return .success(())
    }

    /// `authorize`: rewrites one rule in the config file atomically, then reloads.
    func authorize(subject text: String, rule: AklocProtocol.AuthorizationRule) -> Result<Void, ProtocolError> {
        guard let subject = AuthorizationSubject(text) else {
            return .failure(ProtocolError(.badRequest, "'\(text)' is not a user name or @group"))
        }
        if case .user(let name) = subject, ConfigWriter.reservedKeys.contains(name) {
            // A request error, not a failure to write the file.
            return .failure(ProtocolError(.badRequest, "'\(name)' is a setting of [authorization], not a user"))
        }
        guard let configRule = AuthorizationRule(configValue: rule.rawValue) else {
            return .failure(ProtocolError(.badRequest, "unknown rule '\(rule.rawValue)'"))
        }
        let path = settings.configPath ?? Configuration.defaultPath
        do {
            try ConfigWriter.setRule(subject: subject, rule: configRule, inFile: path)
        } catch {
            log(.error, "authorize \(subject) = \(configRule.rawValue) failed: \(error)")
            // Not written means not in force: the old file and rules stay.
            let code: ErrorCode = error.code == .writeFailed ? .storageFailed : .unavailable
            return .failure(ProtocolError(code, "cannot update \(path): \(error); nothing was changed"))
        }
        log(.notice, "authorization rule set: \(subject) = \(configRule.rawValue) in \(path)")
        return reload()
    }

    /// Puts a new configuration in force: the engine's defaults, and every
    /// live client's authorization re-decided (the engine tells those whose
    /// status changed, and stops their fixes at once when denied).
    func apply(_ new: Configuration) {
        let previousSettings = settings
        let previous = settings.configuration
        settings.configuration = new
        settings.authorizer = Authorizer(rules: new.authorization)
        server.hardLimit = new.socket.clientHardLimit
        engine.configuration = Daemon.engineConfiguration(new)
        settings.users.forget()
        let decisions = engine.persistentState.authorizationDecisions
        for client in server.clients.values.sorted(by: { $0.id < $1.id }) {
            let identity = settings.identity(uid: client.credentials.uid, gid: client.credentials.gid)
            let isAdmin = settings.authorizer.isAdmin(identity)
            if isAdmin != client.isAdmin {
                client.isAdmin = isAdmin
                run(.adminChanged(client.id, isAdmin))
            }
            let status = settings.authorizer.status(for: identity, decisions: decisions)
            if status != engine.authorizationStatus(of: client.id) {
                run(.authorizationChanged(client.id, status))
            }
        }
        if source.mustReplace(from: previousSettings, to: settings) { replaceSource() }
        if !settings.activated, new.socket.path != previous.socket.path || new.socket.mode != previous.socket.mode {
            log(.notice, "[socket] path and mode apply at the next restart; still serving \(settings.socketPath)")
        }
        features.apply(new, previous: previous)
        if new.geo != previous.geo {
            log(.notice, "[geo] applies at the next restart; the geo data stays as loaded")
        }
    }
}
