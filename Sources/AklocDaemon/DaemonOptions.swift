import AklocGPSD
import AklocProtocol

/// `aklocd`'s command line. Parsing is pure so every error path is testable;
/// values given here override the config file.
public struct DaemonOptions: Hashable, Sendable {
    public var socketPath: String?
    public var gpsd: String?
    public var configPath: String?
    public var stateDirectory: String?
    public var logLevel: String?
    public var checkConfig = false
    public var showHelp = false
    public var showVersion = false

    public init() {}

    public struct UsageError: Error, Hashable, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    public static let usage = """
        usage: aklocd [options]

        Serves gpsd fixes to local subscribers over a Unix socket (NDJSON).

        options:
          --socket PATH        socket to serve (default \(DefaultSocket.path), or
                               $AKLOC_SOCKET; ignored under socket activation)
          --gpsd HOST:PORT     gpsd to read (default \(GPSDEndpoint()))
          --config PATH        config file (default \(Configuration.defaultPath))
          --state-dir DIR      state directory (default \(StateStore.defaultDirectory))
          --log-level LEVEL    debug, info, notice, warning or error (default info)
          --check-config       validate the config file and exit
          --version            print the version and exit
          -h, --help           print this help and exit
        """

    public static func parse(_ arguments: [String], environment: [String: String] = [:]) throws(UsageError)
        -> DaemonOptions
    {
        var options = DaemonOptions()
        var remaining = arguments[...]
        func value(for flag: String) throws(UsageError) -> String {
            guard let next = remaining.popFirst(), !next.hasPrefix("--") || next == "-" else {
                throw UsageError(message: "\(flag) needs a value")
            }
            return next
        }
        while let argument = remaining.popFirst() {
            var flag = argument
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                flag = String(argument[..<equals])
                remaining.insert(String(argument[argument.index(after: equals)...]), at: remaining.startIndex)
            }
            switch flag {
            case "--socket": options.socketPath = try value(for: flag)
            case "--gpsd": options.gpsd = try value(for: flag)
            case "--config": options.configPath = try value(for: flag)
            case "--state-dir": options.stateDirectory = try value(for: flag)
            case "--log-level": options.logLevel = try value(for: flag)
            case "--check-config": options.checkConfig = true
            case "--version": options.showVersion = true
            case "-h", "--help": options.showHelp = true
            default: throw UsageError(message: "unknown option '\(argument)'")
            }
        }
        if options.socketPath == nil, let fromEnvironment = environment[DefaultSocket.environmentVariable],
            !fromEnvironment.isEmpty
        {
            options.socketPath = fromEnvironment
        }
        return options
    }
}
