import AklocProtocol
/// `akloc reload`
struct ReloadCommand: Command {
    static let name = "reload"
    static let abstract = "Re-read the daemon's configuration file (admin)"
    static let usage = "reload"
    static let details = "Needs root or membership of the daemon's admin group (default akloc-admin)."

    init(arguments: [String]) throws(CLIError) {
        guard arguments.isEmpty || arguments == ["--"] else { throw .usage("reload takes no arguments") }
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let connection = try DaemonConnection(path: context.socketPath, timeout: AklocCLI.replyTimeout)
        _ = try connection.call(.reload)
        Output.line("aklocd reloaded its configuration")
        return ExitCode.ok
    }
}
