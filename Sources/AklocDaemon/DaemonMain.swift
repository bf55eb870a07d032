import AklocCore
import AklocGPSD
import AklocPosix
import AklocProtocol
import AklocSystemd
import Dispatch
import Glibc

/// `aklocd`'s entry: options, config, state, then the event loop. Exit codes
/// follow sysexits: 64 usage, 78 bad config, 71 cannot serve the socket.
public enum DaemonMain {
    public static func main(arguments: [String], environment: [String: String]) -> Never {
        // A parent may hand down a blocked signal mask (test runners and some
        // supervisors do): the signals aklocd handles must reach it.
        _ = try? SignalMask.unblock(SignalSet([.terminate, .interrupt, .hangup]))
        let options = parseOptions(arguments, environment)
        let logger = Logger.standard(minimumLevel: logLevel(options))
        // Every subscriber holds one descriptor. systemd and most shells set a
        // soft RLIMIT_NOFILE of 1024 (for the sake of select(2), which aklocd
        // does not use) under a far higher hard limit, and DESIGN §7 serves
        // 10 000 subscribers: so take the hard limit. Without this, accept
        // fails with EMFILE past about a thousand clients.
        let descriptors = DescriptorLimit.raiseToHardLimit()
        let loaded = loadConfiguration(options)
        if !loaded.fileExists { logger.info("no config at \(loaded.path): all defaults apply") }
        if let descriptors { logger.debug("descriptor limit raised from \(descriptors.from) to \(descriptors.to)") }
        let store = StateStore(directory: options.stateDirectory ?? StateStore.defaultDirectory)
        let engine = restoreEngine(from: store, loaded, logger: logger)
        serve(options: options, loaded, engine: engine, store: store, logger: logger)
    }

    /// The command line, or exit 64 (and `--help`, `--version` answered).
    private static func parseOptions(_ arguments: [String], _ environment: [String: String]) -> DaemonOptions {
        let options: DaemonOptions
        do {
            options = try DaemonOptions.parse(arguments, environment: environment)
        } catch {
            fail(ExitCode.usage, "aklocd: \(error)\n\(DaemonOptions.usage)")
        }
        if options.showHelp { succeed(DaemonOptions.usage) }
        if options.showVersion { succeed("aklocd \(AklocVersion.string)") }
        if let gpsd = options.gpsd {
            do { _ = try GPSDEndpoint(parsing: gpsd) } catch { fail(ExitCode.usage, "aklocd: --gpsd: \(error)") }
        }
        return options
    }

    private static func logLevel(_ options: DaemonOptions) -> Logger.Level {
        guard let name = options.logLevel else { return .info }
        guard let level = Logger.Level(name: name) else {
            fail(ExitCode.usage, "aklocd: --log-level: expected debug, info, notice, warning or error, got '\(name)'")
        }
        return level
    }

    /// The config file, checked as far as the engine too, or exit 78; with
    /// `--check-config`, the verdict and exit.
    private static func loadConfiguration(_ options: DaemonOptions) -> ConfigParser.Loaded {
        let loaded: ConfigParser.Loaded
        do {
            loaded = try ConfigParser.load(explicitPath: options.configPath)
            try Daemon.engineConfiguration(loaded.configuration).validate()
        } catch let error as ConfigError {
            fail(ExitCode.config, "aklocd: \(error)")
        } catch {
            fail(ExitCode.config, "aklocd: \(options.configPath ?? Configuration.defaultPath): \(error)")
        }
        if options.checkConfig {
            succeed("\(loaded.path): \(loaded.fileExists ? "valid" : "absent, all defaults apply")")
        }
        return loaded
    }

    /// The engine with the state of the last run (a state it cannot read is
    /// logged and the daemon starts clean).
    private static func restoreEngine(from store: StateStore, _ loaded: ConfigParser.Loaded, logger: Logger) -> Engine {
        var state = PersistentState()
        do {
            let restored = try store.load()
            if let warning = restored.warning { logger.warning("\(warning)") }
            state = restored.state
        } catch {
            logger.error("cannot read state in \(store.directory) (\(error)): starting clean")
        }
        do {
            return try Engine(configuration: Daemon.engineConfiguration(loaded.configuration), restoring: state)
        } catch {
            fail(ExitCode.config, "aklocd: \(loaded.path): \(error)")
        }
    }

    /// The daemon on the main thread's event loop, serving systemd's socket
    /// or its own; never returns (`stop` exits the process).
    private static func serve(
        options: DaemonOptions, _ loaded: ConfigParser.Loaded, engine: Engine, store: StateStore, logger: Logger
    ) -> Never {
        let activated: Int32?
        do {
            activated = try ListenFDs.unixStreamListener()
        } catch {
            fail(ExitCode.osError, "aklocd: socket activation: \(error)")
        }
        // One thread runs the daemon: it waits in epoll_wait itself and runs
        // the handlers, timers and the main queue's jobs (EventLoop.swift);
        // made before anything is watched on the main queue.
        let loop: EventLoop
        do {
            loop = try EventLoop.main()
        } catch {
            fail(ExitCode.osError, "aklocd: cannot make the event loop: \(error)")
        }
        var environment = DaemonEnvironment()
        // The loop's own wrapper of the main queue, so every component sees one object.
        environment.queue = loop.queue
        environment.makeClock = { _ in EventLoopClock(loop: loop) }
        let daemon = Daemon(
            options: options, configuration: loaded.configuration, configPath: options.configPath, engine: engine,
            stateStore: store, sessions: LogindSessionMonitor(), logger: logger, environment: environment)
        daemon.queue.async {
            daemon.assumeIsolated { daemon in
                do {
                    try daemon.start(activatedFD: activated)
                } catch {
                    logger.error("cannot serve \(daemon.settings.socketPath): \(error)")
                    exit(ExitCode.osError)
                }
            }
        }
        loop.run()
        exit(0)
    }

    private static func succeed(_ text: String) -> Never {
        print(text)
        exit(0)
    }

    private static func fail(_ code: Int32, _ text: String) -> Never {
        var line = text
        if !line.hasSuffix("\n") { line += "\n" }
        try? Syscall.writeAll(STDERR_FILENO, Array(line.utf8))
        exit(code)
    }
}
