import AklocCore
import AklocProtocol
/// `akloc pause`
struct PauseCommand: Command {
    static let name = "pause"
    static let abstract = "Pause the location service for everyone (admin); clients get `paused`"
    static let usage = "pause"
    static let details = "Needs root or membership of the daemon's admin group (default akloc-admin)."

    init(arguments: [String]) throws(CLIError) {
        guard arguments.isEmpty || arguments == ["--"] else { throw .usage("pause takes no arguments") }
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let connection = try DaemonConnection(path: context.socketPath, timeout: AklocCLI.replyTimeout)
        _ = try connection.call(.engine(.pause))
        Output.line("aklocd paused")
        return ExitCode.ok
    }
}
