import AklocCore
import AklocGPSD
import AklocSystemd
import Dispatch
import Glibc

/// `aklocd`'s entry: options, config, state, then the event loop. Exit codes
/// follow sysexits: 64 usage, 78 bad config, 71 cannot serve the socket.
public enum DaemonMain {
    public static func main(arguments: [String], environment: [String: String]) -> Never {
        let options: DaemonOptions
        do {
            options = try DaemonOptions.parse(arguments, environment: environment)
        } catch {
            fail(64, "aklocd: \(error)\n\(DaemonOptions.usage)")
        }
        if options.showHelp { succeed(DaemonOptions.usage) }
        if options.showVersion { succeed("aklocd \(AklocVersion.string)") }

        var level = Logger.Level.info
        if let name = options.logLevel {
            guard let parsed = Logger.Level(name: name) else {
                fail(64, "aklocd: --log-level: expected debug, info, notice, warning or error, got '\(name)'")
            }
            level = parsed
        }
        if let gpsd = options.gpsd {
            do { _ = try GPSDEndpoint(parsing: gpsd) } catch { fail(64, "aklocd: --gpsd: \(error)") }
        }
        let logger = Logger.standard(minimumLevel: level)
        raiseFileLimit(logger)

        let loaded: ConfigParser.Loaded
        do {
            loaded = try ConfigParser.load(explicitPath: options.configPath)
        } catch {
            fail(78, "aklocd: \(error)")
        }
        // Validated before anything is touched, so --check-config answers for the engine too.
        do {
            try Daemon.engineConfiguration(loaded.configuration).validate()
        } catch {
            fail(78, "aklocd: \(loaded.path): \(error)")
        }
        if options.checkConfig {
            succeed("\(loaded.path): \(loaded.fileExists ? "valid" : "absent, all defaults apply")")
        }
        if !loaded.fileExists { logger.info("no config at \(loaded.path): all defaults apply") }

        let store = StateStore(directory: options.stateDirectory ?? StateStore.defaultDirectory)
        var state = PersistentState()
        do {
            let restored = try store.load()
            if let warning = restored.warning { logger.warning("\(warning)") }
            state = restored.state
        } catch {
            logger.error("cannot read state in \(store.directory) (\(error)): starting clean")
        }
        let engine: Engine
        do {
            engine = try Engine(configuration: Daemon.engineConfiguration(loaded.configuration), restoring: state)
        } catch {
            fail(78, "aklocd: \(loaded.path): \(error)")
        }

        let activated: Int32?
        do {
            activated = try ListenFDs.unixStreamListener()
        } catch {
            fail(71, "aklocd: socket activation: \(error)")
        }

        let daemon = Daemon(
            options: options, configuration: loaded.configuration, configPath: options.configPath, engine: engine,
            stateStore: store, sessions: LogindSessionMonitor(), logger: logger)
        daemon.queue.async {
            daemon.assumeIsolated { daemon in
                do {
                    try daemon.start(activatedFD: activated)
                } catch {
                    logger.error("cannot serve \(daemon.socketPath): \(error)")
                    exit(71)
                }
            }
        }
        dispatchMain()
    }

    /// Every subscriber is a descriptor, and systemd starts services with a
    /// soft RLIMIT_NOFILE of 1024 (hard 524288): raise the soft limit to the
    /// hard one, as systemd.exec(5) advises for programs that use many files
    /// and no select(2) (libgps's gps_waiting is not used, only recv). Past the
    /// limit `accept` fails with EMFILE and clients wait in the backlog.
    private static func raiseFileLimit(_ logger: Logger) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        let soft = limit.rlim_cur
        limit.rlim_cur = limit.rlim_max
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 {
            logger.warning("cannot raise the open file limit from \(soft) to \(limit.rlim_max): errno \(errno)")
        }
    }

    private static func succeed(_ text: String) -> Never {
        print(text)
        exit(0)
    }

    private static func fail(_ code: Int32, _ text: String) -> Never {
        var line = text
        if !line.hasSuffix("\n") { line += "\n" }
        _ = line.withCString { write(2, $0, strlen($0)) }
        exit(code)
    }
}
