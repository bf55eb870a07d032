import AklocCore
import AklocJSON

/// The result of the `status` op. The daemon fills it; `akloc status` prints it.
///
/// Its JSON form is in DaemonStatus+JSON.swift: decoding is lenient (every
/// counter defaults when absent) so a CLI can read the status of a newer or
/// older daemon.
public struct DaemonStatus: Hashable, Sendable {
    public struct Source: Hashable, Sendable {
        /// e.g. `gpsd://127.0.0.1:2947`.
        public var name: String
        public var connected: Bool

        public init(name: String, connected: Bool) {
            self.name = name
            self.connected = connected
        }
    }

    public struct Fix: Hashable, Sendable {
        /// The last fix received from the source.
        public var location: Location
        /// Seconds since it was received: on the monotonic clock for a fix of this
        /// run, on the wall clock (from `receivedAt`) for one restored after a restart.
        public var ageSeconds: Double

        public init(location: Location, ageSeconds: Double) {
            self.location = location
            self.ageSeconds = ageSeconds
        }
    }

    public struct Clients: Hashable, Sendable {
        /// Open connections.
        public var connected: Int
        /// Connections with `startUpdatingLocation` active.
        public var updating: Int
        /// Connections with at least one observation.
        public var observing: Int

        public init(connected: Int = 0, updating: Int = 0, observing: Int = 0) {
            self.connected = connected
            self.updating = updating
            self.observing = observing
        }
    }

    /// Totals since the daemon started.
    public struct Counters: Hashable, Sendable {
        /// Fixes received from the source, one per epoch (its TPVs merged).
        public var fixesReceived: UInt64
        /// Location events sent to subscribers (delegate events, changes and
        /// `requestLocation` answers), counted per subscriber.
        public var deliveries: UInt64
        /// Location events replaced by a newer one in a slow client's queue.
        public var eventsCoalesced: UInt64
        /// Clients disconnected for passing the queue's hard cap.
        public var clientsDropped: UInt64
        /// Requests answered with badJSON, badRequest, unknownOp or unknownKeyPath.
        public var badRequests: UInt64
        /// Connections closed for a line over 64 KiB.
        public var linesTooLong: UInt64
        /// Connections accepted.
        public var connectionsAccepted: UInt64
        /// Requests received (valid or not).
        public var requests: UInt64
        /// Times the source connection was lost.
        public var sourceDisconnects: UInt64
        /// TPVs with a fix received: several per epoch from many receivers
        /// (0 from a daemon older than the field).
        public var tpvsReceived: UInt64

        public init(
            fixesReceived: UInt64 = 0, deliveries: UInt64 = 0, eventsCoalesced: UInt64 = 0,
            clientsDropped: UInt64 = 0, badRequests: UInt64 = 0, linesTooLong: UInt64 = 0,
            connectionsAccepted: UInt64 = 0, requests: UInt64 = 0, sourceDisconnects: UInt64 = 0,
            tpvsReceived: UInt64 = 0
        ) {
            self.fixesReceived = fixesReceived
            self.deliveries = deliveries
            self.eventsCoalesced = eventsCoalesced
            self.clientsDropped = clientsDropped
            self.badRequests = badRequests
            self.linesTooLong = linesTooLong
            self.connectionsAccepted = connectionsAccepted
            self.requests = requests
            self.sourceDisconnects = sourceDisconnects
            self.tpvsReceived = tpvsReceived
        }
    }

    public var version: String
    public var state: ServiceState
    public var paused: Bool
    public var uptimeSeconds: Double
    public var source: Source
    /// The last fix, nil before the first one.
    public var fix: Fix?
    public var clients: Clients
    public var counters: Counters
    /// The MQTT forwarder, when `[mqtt]` is enabled (optional: older daemons omit it).
    public var mqtt: MQTT?

    public init(
        version: String = AklocVersion.string, state: ServiceState, paused: Bool, uptimeSeconds: Double,
        source: Source, fix: Fix?, clients: Clients, counters: Counters, mqtt: MQTT? = nil
    ) {
        self.version = version
        self.state = state
        self.paused = paused
        self.uptimeSeconds = uptimeSeconds
        self.source = source
        self.fix = fix
        self.clients = clients
        self.counters = counters
        self.mqtt = mqtt
    }
}
