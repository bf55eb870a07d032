import AklocCore
import AklocPosix
import AklocProtocol
import Glibc

/// A failure that ends the program with `exitCode` after printing `message`
/// (when not empty) to stderr.
struct CLIError: Error {
    var exitCode: Int32
    var message: String

    static func usage(_ message: String) -> CLIError { CLIError(exitCode: ExitCode.usage, message: message) }
    static func failure(_ message: String) -> CLIError { CLIError(exitCode: ExitCode.failure, message: message) }
    static func unreachable(_ message: String) -> CLIError {
        CLIError(exitCode: ExitCode.unreachable, message: message)
    }

    /// An error reply from the daemon.
    static func reply(_ error: ProtocolError) -> CLIError {
        switch error.code {
        case .forbidden, .notAuthorized:
            CLIError(exitCode: ExitCode.forbidden, message: "\(error.message) (\(error.code.rawValue))")
        default:
            CLIError(exitCode: ExitCode.failure, message: "\(error.message) (\(error.code.rawValue))")
        }
    }
}

/// What every command gets to run with.
struct CommandContext {
    /// The daemon's socket: `--socket`, else `$AKLOC_SOCKET`, else the default.
    var socketPath: String
}

/// A subcommand, in the shape of swift-argument-parser's `ParsableCommand`.
protocol Command {
    /// The word after `akloc`.
    static var name: String { get }
    /// One line for `akloc help`.
    static var abstract: String { get }
    /// The synopsis, without the leading `akloc`.
    static var usage: String { get }
    /// Arguments and options, one per line, for `akloc COMMAND --help`.
    static var details: String { get }

    /// Parses the arguments after the command name (global options removed).
    init(arguments: [String]) throws(CLIError)
    /// Checks the parsed values together.
    func validate() throws(CLIError)
    /// Does the work; returns the exit code.
    func run(_ context: CommandContext) throws(CLIError) -> Int32
}

extension Command {
    func validate() throws(CLIError) {}

    static var helpText: String {
        var text = "\(abstract)\n\nUsage: akloc \(usage)\n"
        if !details.isEmpty { text += "\n\(details)\n" }
        text +=
            "\nGlobal options:\n  --socket PATH   the daemon's socket (default $AKLOC_SOCKET, else \(AklocCLI.defaultSocket))\n"
        text += "  -h, --help      show this help\n"
        return text
    }
}

enum AklocCLI {
    static let defaultSocket = DefaultSocket.path
    /// Seconds to wait for each answer from the daemon.
    static let replyTimeout: Double = 15

    static var commands: [any Command.Type] {
        [
            StatusCommand.self, WatchCommand.self, GetCommand.self, RequestLocationCommand.self,
            PauseCommand.self, ResumeCommand.self, ReloadCommand.self, AuthorizeCommand.self, TrackCommand.self,
            TimelineCommand.self,
            HelpCommand.self,
            WhereCommand.self, SearchCommand.self, CountryCommand.self,
            MapCommand.self, SkyCommand.self,
            PlacesCommand.self,
        ]
    }

    static func command(named name: String) -> (any Command.Type)? {
        commands.first { $0.name == name }
    }

    static var overview: String {
        var text = """
            akloc \(AklocVersion.string): control and inspect the aklocd location service

            Usage: akloc [--socket PATH] COMMAND [ARGUMENTS…]

            Commands:

            """
        for command in commands {
            let padded = command.name + String(repeating: " ", count: max(1, 18 - command.name.count))
            text += "  \(padded)\(command.abstract)\n"
        }
        text += """

            Options:
              --socket PATH     the daemon's socket (default $AKLOC_SOCKET, else \(defaultSocket))
              --version         print akloc's version
              -h, --help        show this help; `akloc COMMAND --help` for a command

            Exit status: 0 ok, 64 usage error, 69 daemon unreachable or gone,
            77 forbidden or not authorized, 1 any other failure.

            """
        return text
    }

    /// Runs the CLI and returns the exit status.
    static func main(_ arguments: [String]) -> Int32 {
        try? Signal.pipe.setDisposition(.ignore)  // EPIPE is handled where it happens
        do {
            return try dispatch(arguments)
        } catch {
            if !error.message.isEmpty { Output.error("akloc: \(error.message)") }
            return error.exitCode
        }
    }

    private static func dispatch(_ arguments: [String]) throws(CLIError) -> Int32 {
        var socketOption: String?
        var rest: [String] = []
        var index = 0
        var afterDashDash = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if afterDashDash {
                rest.append(argument)
            } else if argument == "--" {
                afterDashDash = true
                rest.append(argument)
            } else if argument == "--socket" {
                guard index < arguments.count else { throw .usage("--socket needs a PATH") }
                socketOption = arguments[index]
                index += 1
            } else if argument.hasPrefix("--socket=") {
                socketOption = String(argument.dropFirst("--socket=".count))
                if socketOption!.isEmpty { throw .usage("--socket needs a non-empty PATH") }
            } else {
                rest.append(argument)
            }
        }
        if socketOption?.isEmpty == true { throw .usage("--socket needs a non-empty PATH") }
        let environment = getenv(DefaultSocket.environmentVariable).map { String(cString: $0) }
        let context = CommandContext(
            socketPath: DefaultSocket.resolve(explicit: socketOption, environment: environment))

        guard let first = rest.first else {
            Output.error(overview)
            return ExitCode.usage
        }
        switch first {
        case "--version", "-V", "version":
            Output.line("akloc \(AklocVersion.string)")
            return ExitCode.ok
        case "--help", "-h":
            Output.line(overview, newline: false)
            return ExitCode.ok
        default:
            break
        }
        guard let type = command(named: first) else {
            if first.hasPrefix("-") { throw .usage("unknown option \(first) (see `akloc --help`)") }
            throw .usage("unknown command '\(first)' (see `akloc --help`)")
        }
        let commandArguments = Array(rest.dropFirst())
        let beforeDashDash = commandArguments.prefix { $0 != "--" }
        if beforeDashDash.contains("--help") || beforeDashDash.contains("-h") {
            Output.line(type.helpText, newline: false)
            return ExitCode.ok
        }
        let command = try type.init(arguments: commandArguments)
        try command.validate()
        return try command.run(context)
    }
}
