import AklocProtocol
/// `akloc help [COMMAND]`
struct HelpCommand: Command {
    static let name = "help"
    static let abstract = "Show help for akloc or one of its commands"
    static let usage = "help [COMMAND]"
    static let details = ""

    var topic: String?

    init(arguments: [String]) throws(CLIError) {
        guard arguments.count <= 1 else { throw .usage("help takes at most one COMMAND") }
        topic = arguments.first
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        guard let topic else {
            Output.line(AklocCLI.overview, newline: false)
            return ExitCode.ok
        }
        guard let command = AklocCLI.command(named: topic) else {
            throw .usage("unknown command '\(topic)' (see `akloc --help`)")
        }
        Output.line(command.helpText, newline: false)
        return ExitCode.ok
    }
}
