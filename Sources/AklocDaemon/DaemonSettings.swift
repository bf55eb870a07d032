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
}
