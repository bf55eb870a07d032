import AklocCore
import AklocGPSD
import AklocPosix

/// Where fixes come from: the endpoint the options and `[gpsd]` name, the
/// source connected to it now, and how a reload makes the next one.
struct SourceSlot {
    private(set) var current: (any FixSource)?
    private let make: (GPSDEndpoint, _ device: String?) -> any FixSource

    init(make: @escaping (GPSDEndpoint, _ device: String?) -> any FixSource) {
        self.make = make
    }

    /// `--gpsd` when given, else `[gpsd]` host and port.
    static func endpoint(_ settings: DaemonSettings) -> GPSDEndpoint {
        if let text = settings.options.gpsd {
            // Validated by `DaemonMain` before the daemon starts.
            return (try? GPSDEndpoint(parsing: text)) ?? GPSDEndpoint()
        }
        return GPSDEndpoint(host: settings.configuration.gpsd.host, port: settings.configuration.gpsd.port)
    }

    /// Makes the source for `settings` and returns it for the caller to
    /// start (it reconnects by itself from then on).
    mutating func make(
        for settings: DaemonSettings, watching: Bool, onEvent: @escaping (GPSDSource.Event) -> Void
    ) -> any FixSource {
        let source = make(SourceSlot.endpoint(settings), settings.configuration.gpsd.device)
        source.onEvent = onEvent
        source.setWatch(watching)
        current = source
        return source
    }

    /// Whether a reload from `previous` to `new` changes where fixes come
    /// from (only while a source runs: at start there is none to replace).
    func mustReplace(from previous: DaemonSettings, to new: DaemonSettings) -> Bool {
        current != nil
            && (SourceSlot.endpoint(new) != SourceSlot.endpoint(previous)
                || new.configuration.gpsd.device != previous.configuration.gpsd.device)
    }

    /// Detaches the current source and returns it for the caller to stop.
    mutating func remove() -> (any FixSource)? {
        defer { current = nil }
        current?.onEvent = nil
        return current
    }

    /// The name `status` gives the source: the connected one's, else the configured one.
    func name(_ settings: DaemonSettings) -> String {
        current?.sourceName ?? settings.configuration.gpsd.sourceName
    }
}
