import AklocCore
import AklocJSON
import AklocPosix
import AklocProtocol
import Glibc

/// `akloc sky [--json] [--min S]`: the receiver's satellites, live, as `cgps` shows them.
struct SkyCommand: Command {
    static let name = "sky"
    static let abstract = "Show the receiver's satellites live: a table and a sky plot (or NDJSON)"
    static let usage = "sky [--json] [--min S]"
    static let details = """
        Observes the `satellites` key path (and `rawLocation` for the fix line) and redraws the
        terminal in place at each change: the receiver, satellites used and in view, the dilutions
        of precision, the fix; a table of the satellites (used ones first, then by signal); and a
        polar plot of the sky, north up, the horizon on the outer ring, 45° on the inner one, each
        satellite as its PRN ([PRN] when used). Plain ANSI: works over SSH, fits 80×24, and
        Ctrl-C restores the terminal.

        Options:
          --json    one NDJSON object per change instead: the `satellites` value
                    (docs/protocol.md §7), flushed at once
          --min S   at most one change every S seconds (default 0: every change)

        Needs the same authorization as myLocation. Stops with status 0 on Ctrl-C, 69 when the
        daemon goes away, 77 when not authorized.
        """

    var json: Bool
    var minInterval: Double?

    init(arguments: [String]) throws(CLIError) {
        let scanner = try ArgumentScanner(arguments, options: ["--min"], flags: ["--json"])
        guard scanner.positionals.isEmpty else {
            throw .usage("unexpected argument '\(scanner.positionals[0])' (akloc sky takes options only)")
        }
        json = scanner.flag("--json")
        minInterval = try scanner.number("--min", unit: "seconds")
    }

    func validate() throws(CLIError) {
        if let minInterval, !(0...86_400).contains(minInterval) {
            throw .usage("--min must be from 0 to 86400 seconds (got \(minInterval))")
        }
    }

    /// Restores what `start` changed: shows the cursor, leaves the alternate screen.
    static let restore: StaticString = "\u{1B}[?25h\u{1B}[?1049l"

    func run(_ context: CommandContext) throws(CLIError) -> Int32 {
        let connection = try DaemonConnection(path: context.socketPath, timeout: AklocCLI.replyTimeout)
        let live = !json && Terminal.isTerminal(1)
        // Ctrl-C, SIGTERM and a hang-up (SSH gone) end the view with the
        // terminal as it was: the handler only writes a literal and exits.
        if live {
            let handler = Signal.Disposition.handler { _ in
                Terminal.writeLiteral(SkyCommand.restore, to: 1)
                _exit(0)
            }
            for signal in [Signal.interrupt, .terminate, .hangup] { try? signal.setDisposition(handler) }
        } else {
            for signal in [Signal.interrupt, .terminate] { try? signal.setDisposition(.handler { _ in _exit(0) }) }
        }
        _ = try? SignalMask.unblock(SignalSet([.interrupt, .terminate, .hangup]))

        var policy = ThrottlePolicy.Partial()
        policy.minInterval = minInterval ?? 0
        var view = SkyPicture(sky: nil, location: nil, columns: 80, rows: 24)
        let show = { (view: SkyPicture) in
            guard !json else { return }
            var screen = live ? "\u{1B}[H" : ""
            let size = live ? Terminal.size(1) : nil
            var sized = view
            sized.columns = size?.columns ?? 80
            sized.rows = size?.rows ?? 24
            let lines = sized.lines()
            if live {
                screen += lines.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n") + "\u{1B}[J"
                Output.line(screen, newline: false)
            } else {
                // Not a terminal: each frame in turn, then a blank line.
                Output.line(lines.joined(separator: "\n") + "\n")
            }
        }
        var failure: CLIError?
        let handle = { (received: DaemonConnection.Event) in
            guard case .change(let change) = received.event else {
                if case .didGetNotification(.daemonStopping) = received.event {
                    failure = .unreachable("aklocd is stopping")
                }
                return
            }
            switch change.keyPath.root {
            case .satellites:
                if change.new == .null { return }
                do throws(ProtocolError) {
                    view.sky = try SkyView(wire: change.new)
                } catch {
                    Output.error("akloc: ignoring a satellites value: \(error.message)")
                    return
                }
                if json { Output.line(change.new.jsonString) }
            case .rawLocation:
                view.location = Location(json: change.new)
            default:
                return
            }
            show(view)
        }
        if live { Output.line("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[J", newline: false) }
        defer { if live { Terminal.writeLiteral(Self.restore, to: 1) } }
        _ = try connection.call(
            .engine(.observe(KeyPath(.satellites), initial: true, old: false, policy: policy)), onEvent: handle)
        if !json {
            _ = try connection.call(
                .engine(.observe(KeyPath(.rawLocation), initial: true, old: false, policy: nil)), onEvent: handle)
        }
        show(view)
        connection.setTimeout(0)
        while failure == nil, let (line, event) = try connection.nextMessage() {
            handle((line, event))
        }
        throw failure ?? .unreachable("aklocd closed the connection")
    }
}
