import AklocCore
import AklocProtocol
/// `akloc resume`
struct ResumeCommand: Command {
    static let name = "resume"
    static let abstract = "Resume the location service (admin); clients get `resumed`"
    static let usage = "resume"
    static let details = "Needs root or membership of the daemon's admin group (default akloc-admin)."

    init(arguments: [String]) throws(CLIError) {
        guard arguments.isEmpty || arguments == ["--"] else { throw .usage("resume takes no arguments") }
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let connection = try DaemonConnection(path: context.socketPath, timeout: AklocCLI.replyTimeout)
        _ = try connection.call(.engine(.resume))
        Output.line("aklocd resumed")
        return ExitCode.ok
    }
}
