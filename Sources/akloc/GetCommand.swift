import AklocCore
import AklocJSON
import AklocProtocol

/// `akloc get KEYPATH`
struct GetCommand: Command {
    static let name = "get"
    static let abstract = "Print the current value of a key path"
    static let usage = "get KEYPATH"
    static let details = """
        Arguments:
          KEYPATH         myLocation, myLocation.speed, rawLocation.coordinate, authorizationStatus,
                          state, source, … (docs/protocol.md §7)

        Prints the value as JSON on one line; a string value is printed without quotes.
        """

    var keyPath: String

    init(arguments: [String]) throws(CLIError) {
        let scanner = try ArgumentScanner(arguments)
        guard scanner.positionals.count == 1 else { throw .usage("get needs exactly one KEYPATH") }
        keyPath = scanner.positionals[0]
    }

    func validate() throws(CLIError) {
        _ = try parsedKeyPath()
    }

    private func parsedKeyPath() throws(CLIError) -> AklocCore.KeyPath {
        guard let parsed = try? AklocCore.KeyPath(parsing: keyPath) else {
            throw .usage("unknown key path '\(keyPath)'")
        }
        return parsed
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let connection = try DaemonConnection(path: context.socketPath, timeout: AklocCLI.replyTimeout)
        let value = try connection.call(.engine(.get(try parsedKeyPath())))
        if case .string(let text) = value {
            Output.line(text)
        } else {
            Output.line(bytes: value.jsonBytes)
        }
        return ExitCode.ok
    }
}
