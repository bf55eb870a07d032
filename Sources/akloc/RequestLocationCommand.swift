import AklocCore
import AklocJSON
import AklocProtocol

/// `akloc request-location [--timeout S] [--human]`
struct RequestLocationCommand: Command {
    static let name = "request-location"
    static let abstract = "Wait for one fresh location and print it"
    static let usage = "request-location [--timeout S] [--human]"
    static let details = """
        Options:
          --timeout S     give up after S seconds (default 10, at most 3600); exit status 1
          --human         print a readable line instead of the location's JSON
        """

    var timeout: Double = ClientRequest.defaultRequestLocationTimeout
    var human = false

    init(arguments: [String]) throws(CLIError) {
        let scanner = try ArgumentScanner(arguments, options: ["--timeout"], flags: ["--human"])
        guard scanner.positionals.isEmpty else { throw .usage("request-location takes no arguments") }
        timeout = try scanner.number("--timeout", unit: "seconds", allowZero: false) ?? timeout
        human = scanner.flag("--human")
    }

    func validate() throws(CLIError) {
        guard timeout <= ClientRequest.maxRequestLocationTimeout else {
            throw .usage("--timeout is at most \(format(ClientRequest.maxRequestLocationTimeout)) seconds")
        }
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let connection = try DaemonConnection(path: context.socketPath, timeout: timeout + AklocCLI.replyTimeout)
        let result = try connection.call(.engine(.requestLocation(timeout: timeout)))
        if human, let location = Location(json: result) {
            Output.line(Formatting.locationLine(location, afterTimeInterval: nil))
        } else {
            Output.line(bytes: result.jsonBytes)
        }
        return ExitCode.ok
    }
}
