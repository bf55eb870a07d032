import AklocCore
import AklocJSON
import AklocPosix
import AklocProtocol
import Glibc

/// `akloc watch [KEYPATH…] [--min S] [--max S] [--speed M/S] [--distance M] [--accuracy M] [--every-epoch] [--human]`
struct WatchCommand: Command {
    static let name = "watch"
    static let abstract = "Stream locations (or key path changes) as NDJSON until interrupted"
    static let usage =
        "watch [KEYPATH…] [--min S] [--max S] [--speed M/S] [--distance M] [--accuracy M] [--every-epoch] [--human]"
    static let details = """
        Without KEYPATH, starts delegate-style updates: didGetFirstLocation, didUpdateLocation,
        didGetError and didGetNotification events. With KEYPATHs (myLocation, myLocation.speed,
        state, …), observes each one and prints its change events, starting with the current value.

        Options (the throttle policy; any left out take the daemon's configured defaults):
          --min S         minimum interval while moving, seconds (default 5)
          --max S         maximum interval while still, seconds (default 300)
          --speed M/S     speed at or above which --min applies (default 0.4)
          --distance M    under --max, deliver only after moving M metres (default 0: off)
          --accuracy M    skip fixes with a horizontal accuracy worse than M metres (default 0: off)
          --every-epoch   also print every epoch unthrottled (without KEYPATH only)
          --human         one readable line per event instead of NDJSON, locations with the
                          place they are near ("near Enkhuizen", from reverseGeocode)

        Each event is printed as one line, exactly as the daemon sent it, and flushed at once.
        Stops with status 0 on Ctrl-C or a closed stdout, 69 when the daemon goes away.
        """

    var keyPaths: [String]
    var policy = ThrottlePolicy.Partial()
    var everyEpoch: Bool
    var human: Bool

    init(arguments: [String]) throws(CLIError) {
        let scanner = try ArgumentScanner(
            arguments, options: ["--min", "--max", "--speed", "--distance", "--accuracy"],
            flags: ["--human", "--every-epoch"])
        keyPaths = scanner.positionals
        human = scanner.flag("--human")
        everyEpoch = scanner.flag("--every-epoch")
        let members: [(String, WritableKeyPath<ThrottlePolicy.Partial, Double?>, String)] = [
            ("--min", \.minInterval, "seconds"), ("--max", \.maxInterval, "seconds"),
            ("--speed", \.updateSpeed, "metres per second"), ("--distance", \.distanceFilter, "metres"),
            ("--accuracy", \.desiredAccuracy, "metres"),
        ]
        for (option, member, unit) in members {
            if let value = try scanner.number(option, unit: unit) { policy[keyPath: member] = value }
        }
    }

    func validate() throws(CLIError) {
        for keyPath in keyPaths where (try? AklocCore.KeyPath(parsing: keyPath)) == nil {
            throw .usage("unknown key path '\(keyPath)'")
        }
        if everyEpoch && !keyPaths.isEmpty {
            throw .usage("--every-epoch applies to location updates, not to KEYPATHs (observe rawLocation instead)")
        }
        if let min = policy.minInterval, let max = policy.maxInterval, min > max {
            throw .usage("--min (\(format(min))) must not exceed --max (\(format(max)))")
        }
        do {
            // The daemon checks the whole against the subscriber's defaults.
            try policy.validate()
        } catch {
            throw .usage(error.message.replacingPolicyNames())
        }
    }

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let connection = try DaemonConnection(path: context.socketPath, timeout: AklocCLI.replyTimeout)
        // Ctrl-C and SIGTERM end a watch quietly with status 0. Unblock them
        // too: a parent may have left them blocked in the inherited mask.
        try? Signal.interrupt.setDisposition(.handler { _ in _exit(0) })
        try? Signal.terminate.setDisposition(.handler { _ in _exit(0) })
        _ = try? SignalMask.unblock(SignalSet([.interrupt, .terminate]))
        let human = human
        // The daemon announces the first fix (didGetFirstLocation) and then
        // delivers that same fix as the first update; a person needs it once.
        var announcedFirstFix: Location?
        // A person reads where the fix is too ("near Enkhuizen"), which takes
        // a reverseGeocode per line; events that arrive meanwhile wait here.
        var backlog: [DaemonConnection.Event] = []
        var namer = PlaceNamer()
        let emit = { (received: DaemonConnection.Event) throws(CLIError) in
            guard human else { return Output.line(bytes: received.line) }
            switch received.event {
            case .didGetFirstLocation(let location):
                announcedFirstFix = location
            case .didUpdateLocation(let location, nil) where location == announcedFirstFix:
                announcedFirstFix = nil
                return
            case .change(let change):
                if let text = GeoFormatting.change(change) {
                    return Output.line("\(Formatting.clock(nil))  \(text)")
                }
            default:
                break
            }
            guard var text = Formatting.eventLine(received.event) else { return }
            if let position = Self.position(received.event),
                let note = namer.note(latitude: position.latitude, longitude: position.longitude, connection, &backlog)
            {
                text += "  \(note)"
            }
            Output.line(text)
        }
        // While a request is answered, events wait (a human line's lookup
        // must not read the request's reply).
        let hold = { (received: DaemonConnection.Event) throws(CLIError) in
            if human { backlog.append(received) } else { try emit(received) }
        }
        // Only the options given travel: the daemon keeps its defaults for the rest.
        let requested = policy.isEmpty ? nil : policy
        if keyPaths.isEmpty {
            _ = try connection.call(
                .engine(.startUpdatingLocation(policy: requested, everyEpoch: everyEpoch)), onEvent: hold)
        } else {
            // `regions` names the monitored places the fix is inside: watching
            // it monitors every place the caller sees, with entry and exit events.
            if keyPaths.contains("regions") {
                _ = try connection.call(.places(.startMonitoring(names: nil)), onEvent: emit)
            }
            for text in keyPaths {
                // Parsed in validate().
                guard let keyPath = try? AklocCore.KeyPath(parsing: text) else { continue }
                _ = try connection.call(
                    .engine(.observe(keyPath, initial: true, old: false, policy: requested)), onEvent: hold)
            }
        }
        connection.setTimeout(0)
        var stopping = false
        while true {
            let received: DaemonConnection.Event
            if !backlog.isEmpty {
                received = backlog.removeFirst()
            } else {
                guard let (line, event) = try connection.nextMessage() else { break }
                switch event {
                case .reply, .hello: continue
                default: received = (line, event)
                }
            }
            try emit(received)
            if case .didGetNotification(.daemonStopping) = received.event { stopping = true }
        }
        throw .unreachable(stopping ? "aklocd is stopping" : "aklocd closed the connection")
    }
}

extension WatchCommand {
    /// Where a line puts the fix, for its place note: a location, or a
    /// coordinate's change (`watch myLocation.coordinate`).
    static func position(_ event: ServerEvent) -> (latitude: Double, longitude: Double)? {
        if let location = event.location { return (location.latitude, location.longitude) }
        guard case .change(let change) = event, let latitude = change.new["latitude"]?.doubleValue,
            let longitude = change.new["longitude"]?.doubleValue
        else { return nil }
        return (latitude, longitude)
    }
}

extension String {
    /// Protocol member names in a policy error, as the CLI's options.
    fileprivate func replacingPolicyNames() -> String {
        var text = self
        for (member, option) in [
            ("minInterval", "--min"), ("maxInterval", "--max"), ("updateSpeed", "--speed"),
            ("distanceFilter", "--distance"), ("desiredAccuracy", "--accuracy"),
        ] {
            text = text.replacing("policy \"\(member)\"", with: option).replacing(member, with: option)
        }
        return text
    }
}
