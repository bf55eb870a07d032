import AklocJSON
import AklocProtocol

/// `akloc status [--json]`
struct StatusCommand: Command {
    static let name = "status"
    static let abstract = "Show the daemon's state, source, last fix, clients and counters"
    static let usage = "status [--json]"
    static let details = """
        Options:
          --json          print the status object as one line of JSON (docs/protocol.md §7)
        """

    var json = false

    init(arguments: [String]) throws(CLIError) {
        let scanner = try ArgumentScanner(arguments, flags: ["--json"])
        guard scanner.positionals.isEmpty else { throw .usage("status takes no arguments") }
        json = scanner.flag("--json")
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let connection = try DaemonConnection(path: context.socketPath, timeout: AklocCLI.replyTimeout)
        let result = try connection.call(.status)
        if json {
            Output.line(bytes: result.jsonBytes)
            return ExitCode.ok
        }
        let status: DaemonStatus
        do {
            status = try DaemonStatus(json: result)
        } catch {
            throw .failure("aklocd sent a status this akloc cannot read: \(error)")
        }
        Output.line(Formatting.status(status))
        return ExitCode.ok
    }
}
