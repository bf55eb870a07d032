import AklocCore
import AklocJSON

extension DaemonStatus {
    /// A `status` result this CLI cannot read: which member, and why.
    public struct FormatError: Error, Hashable, Sendable, CustomStringConvertible {
        public var member: String
        public var problem: String

        public var description: String { "\"\(member)\" \(problem)" }
    }

    /// Writes the status as a JSON object, keys sorted; absent optionals are omitted.
    public func write(to writer: inout JSONWriter) {
        writer.raw("{\"clients\":{\"connected\":")
        writer.integer(Int64(clients.connected))
        writer.raw(",\"observing\":")
        writer.integer(Int64(clients.observing))
        writer.raw(",\"updating\":")
        writer.integer(Int64(clients.updating))
        writer.raw("},\"counters\":")
        counters.write(to: &writer)
        if let fix {
            writer.raw(",\"fix\":{\"ageSeconds\":")
            writer.number(fix.ageSeconds)
            writer.raw(",\"location\":")
            ServerEncoder.writeLocation(fix.location, to: &writer)
            writer.byte(UInt8(ascii: "}"))
        }
        if let mqtt {
            writer.raw(",\"mqtt\":")
            mqtt.write(to: &writer)
        }
        writer.raw(",\"paused\":")
        writer.bool(paused)
        writer.raw(",\"source\":{\"connected\":")
        writer.bool(source.connected)
        writer.raw(",\"name\":")
        writer.string(source.name)
        writer.raw("},\"state\":")
        writer.string(state.rawValue)
        writer.raw(",\"uptimeSeconds\":")
        writer.number(uptimeSeconds)
        writer.raw(",\"version\":")
        writer.string(version)
        writer.byte(UInt8(ascii: "}"))
    }

    /// Decodes a `status` reply's result.
    public init(json: JSONValue) throws(FormatError) {
        let object = try WireObject(json, "status")
        let source = try object.object("source")
        let clients = try object.object("clients")
        let counters = try object.object("counters")
        var fix: Fix?
        if let member = try object.optionalObject("fix") {
            guard let value = member.members["location"], let location = Location(json: value) else {
                throw FormatError(member: "fix.location", problem: "is not a location")
            }
            fix = Fix(location: location, ageSeconds: try member.double("ageSeconds"))
        }
        guard let state = ServiceState(rawValue: try object.string("state")) else {
            throw FormatError(member: "state", problem: "is not a known state")
        }
        self.init(
            version: try object.string("version"), state: state, paused: try object.bool("paused"),
            uptimeSeconds: try object.double("uptimeSeconds"),
            source: Source(name: try source.string("name"), connected: try source.bool("connected")), fix: fix,
            clients: Clients(
                connected: try clients.int("connected"), updating: try clients.int("updating"),
                observing: try clients.int("observing")),
            counters: Counters(
                fixesReceived: try counters.count("fixesReceived"), deliveries: try counters.count("deliveries"),
                eventsCoalesced: try counters.count("eventsCoalesced"),
                clientsDropped: try counters.count("clientsDropped"), badRequests: try counters.count("badRequests"),
                linesTooLong: try counters.count("linesTooLong"),
                connectionsAccepted: try counters.count("connectionsAccepted"),
                requests: try counters.count("requests"), sourceDisconnects: try counters.count("sourceDisconnects"),
                tpvsReceived: try counters.count("tpvsReceived")),
            mqtt: try object.optionalObject("mqtt").map { (mqtt) throws(FormatError) in try MQTT(mqtt) })
    }
}

extension DaemonStatus.Counters {
    fileprivate func write(to writer: inout JSONWriter) {
        let fields: [(StaticString, UInt64)] = [
            ("badRequests", badRequests), ("clientsDropped", clientsDropped),
            ("connectionsAccepted", connectionsAccepted), ("deliveries", deliveries),
            ("eventsCoalesced", eventsCoalesced), ("fixesReceived", fixesReceived), ("linesTooLong", linesTooLong),
            ("requests", requests), ("sourceDisconnects", sourceDisconnects), ("tpvsReceived", tpvsReceived),
        ]
        writer.byte(UInt8(ascii: "{"))
        for (index, (key, value)) in fields.enumerated() {
            if index > 0 { writer.byte(UInt8(ascii: ",")) }
            writer.key(key)
            writer.integer(Int64(clamping: value))
        }
        writer.byte(UInt8(ascii: "}"))
    }
}

extension DaemonStatus.MQTT {
    fileprivate func write(to writer: inout JSONWriter) {
        writer.raw("{\"broker\":")
        writer.string(broker)
        writer.raw(",\"connected\":")
        writer.bool(connected)
        writer.raw(",\"dropped\":{\"expired\":")
        writer.integer(Int64(clamping: dropped.expired))
        writer.raw(",\"maxAge\":")
        writer.integer(Int64(clamping: dropped.maxAge))
        writer.raw(",\"maxBytes\":")
        writer.integer(Int64(clamping: dropped.maxBytes))
        writer.raw(",\"maxEntries\":")
        writer.integer(Int64(clamping: dropped.maxEntries))
        writer.raw("},\"failed\":")
        writer.integer(Int64(clamping: failed))
        writer.raw(",\"nodes\":[")
        for (index, node) in nodes.enumerated() {
            if index > 0 { writer.byte(UInt8(ascii: ",")) }
            writer.string(node)
        }
        writer.byte(UInt8(ascii: "]"))
        if let lastError {
            writer.raw(",\"lastError\":")
            writer.string(lastError)
        }
        if let oldestQueuedAgeSeconds {
            writer.raw(",\"oldestQueuedAgeSeconds\":")
            writer.number(oldestQueuedAgeSeconds)
        }
        if let protocolVersion {
            writer.raw(",\"protocol\":")
            writer.string(protocolVersion)
        }
        writer.raw(",\"published\":")
        writer.integer(Int64(clamping: published))
        writer.raw(",\"queued\":")
        writer.integer(Int64(queued))
        writer.raw(",\"queuedBytes\":")
        writer.integer(Int64(queuedBytes))
        writer.raw(",\"resent\":")
        writer.integer(Int64(clamping: resent))
        writer.raw(",\"sessionPresent\":")
        writer.bool(sessionPresent)
        writer.raw(",\"switches\":")
        writer.integer(Int64(clamping: switches))
        writer.raw(",\"tid\":")
        writer.string(tid)
        writer.raw(",\"topic\":")
        writer.string(topic)
        writer.byte(UInt8(ascii: "}"))
    }

    fileprivate init(_ object: WireObject) throws(DaemonStatus.FormatError) {
        let dropped = try object.object("dropped")
        self.init(
            broker: try object.string("broker"), topic: try object.string("topic"), tid: try object.string("tid"),
            connected: try object.bool("connected"), queued: try object.int("queued"),
            queuedBytes: try object.int("queuedBytes"),
            oldestQueuedAgeSeconds: try object.optionalDouble("oldestQueuedAgeSeconds"),
            published: try object.count("published"), failed: try object.count("failed"),
            resent: try object.count("resent"),
            dropped: Dropped(
                maxEntries: try dropped.count("maxEntries"), maxBytes: try dropped.count("maxBytes"),
                maxAge: try dropped.count("maxAge"), expired: try dropped.count("expired")),
            lastError: try object.optionalString("lastError"), nodes: try object.optionalStrings("nodes"),
            switches: try object.count("switches"))
        protocolVersion = try object.optionalString("protocol")
        sessionPresent = try object.optionalBool("sessionPresent") ?? false
    }
}
