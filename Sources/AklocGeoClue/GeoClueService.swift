import AklocCore
import AklocPosix
import AklocSystemd
import Dispatch

/// `org.freedesktop.GeoClue2` on the system bus (DESIGN §12): the Manager
/// at /org/freedesktop/GeoClue2/Manager, one Client object per client a peer
/// asks for, and a Location object per delivered fix, as GeoClue lays them
/// out. The daemon decides who may start and feeds each started client its
/// throttled fixes (`deliver`); this type keeps the bus side: objects,
/// properties, signals, and which peer owns what.
///
/// Confinement: created and used on the daemon's queue only.
public final class GeoClueService {
    public static let busName = "org.freedesktop.GeoClue2"
    static let root = "/org/freedesktop/GeoClue2"
    static let managerPath = root + "/Manager"
    static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"

    /// A client asking to start, as the daemon needs to decide.
    public struct StartRequest: Sendable {
        public var client: UInt32
        public var uid: UInt32
        public var gid: UInt32
        public var desktopID: String
        public var policy: ThrottlePolicy
    }

    public enum Decision: Sendable, Equatable {
        case started
        case denied(String)
    }

    /// The daemon's side; called on the queue.
    public struct Handlers {
        public var start: (StartRequest) -> Decision = { _ in .denied("not served") }
        public var stop: (UInt32) -> Void = { _ in }
        public var policyChanged: (UInt32, ThrottlePolicy) -> Void = { _, _ in }

        public init() {}
    }

    struct Client {
        let number: UInt32
        let peer: String
        let uid: UInt32
        let gid: UInt32
        var desktopID = ""
        var requestedLevel: UInt32 = 0
        var thresholds = GeoClueThresholds()
        var active = false
        var location: (number: UInt32, value: GeoClueLocation)?
        /// The location before it, kept so a reader of LocationUpdated's `old` still finds it.
        var previous: (number: UInt32, value: GeoClueLocation)?
        var nextLocation: UInt32 = 1

        var path: String { GeoClueService.root + "/Client/\(number)" }
        func locationPath(_ location: UInt32) -> String { path + "/Location/\(location)" }
    }

    public var handlers = Handlers()
    private let queue: DispatchQueue
    private let log: (LogLevel, String) -> Void
    private var bus: BusConnection?
    private var clients: [UInt32: Client] = [:]
    /// The client `GetClient` hands each peer again.
    private var sharedClient: [String: UInt32] = [:]
    /// Each peer's uid and gid, asked of the bus once.
    private var peerCredentials: [String: (uid: UInt32, gid: UInt32)] = [:]
    private var lastClient: UInt32 = 0
    private var inUse = false

    public init(queue: DispatchQueue, log: @escaping (LogLevel, String) -> Void) {
        self.queue = queue
        self.log = log
    }

    /// Clients that exist now, and those started.
    public var clientCount: Int { clients.count }
    public var activeCount: Int { clients.values.count { $0.active } }

    /// Connects to the system bus, serves the objects and asks for the name.
    /// A taken name is not an error: the objects stay reachable by unique
    /// name, and the daemon logs it and serves everything else.
    public func start() throws(Errno) -> BusConnection.NameRequest {
        let bus = try BusConnection(systemBusOn: queue)
        self.bus = bus
        try bus.addObjectTree(Self.root) { [weak self] message in self?.handle(message) ?? false }
        try bus.onNameOwnerChanged { [weak self] name, _, new in
            if new.isEmpty, name.hasPrefix(":") { self?.peerLeft(name) }
        }
        let request = bus.requestName(Self.busName)
        try bus.start()
        return request
    }

    public func stop() {
        for client in clients.values where client.active { handlers.stop(client.number) }
        clients.removeAll()
        sharedClient.removeAll()
        bus?.close()
        bus = nil
    }

    /// A fix for started client `number`, already throttled to its thresholds.
    public func deliver(_ location: Location, to number: UInt32) {
        guard var client = clients[number], client.active, let bus else { return }
        guard let shown = AccuracyLevel(requested: client.requestedLevel).coarsen(location) else { return }
        let old = client.location.map { client.locationPath($0.number) } ?? "/"
        client.previous = client.location
        let newNumber = client.nextLocation
        client.nextLocation += 1
        client.location = (newNumber, shown)
        clients[number] = client
        let new = client.locationPath(newNumber)
        emitPropertiesChanged(client.path, GeoClueInterfaces.clientName, [("Location", .objectPath(new))])
        do {
            let signal = try bus.signal(
                path: client.path, interface: GeoClueInterfaces.clientName, member: "LocationUpdated")
            try signal.append(objectPath: old)
            try signal.append(objectPath: new)
            bus.send(signal)
        } catch {
            log(.warning, "GeoClue: cannot signal client \(number)'s location: \(error)")
        }
    }

    // MARK: Routing

    private func handle(_ message: BusMessage) -> Bool {
        guard message.isMethodCall, let path = message.path, let member = message.member, let bus else {
            return false
        }
        let interface = message.interface ?? ""
        switch interface {
        case "org.freedesktop.DBus.Introspectable" where member == "Introspect":
            guard let xml = introspection(of: path) else { return false }
            reply(to: message) { (reply) throws(Errno) in try reply.append(string: xml) }
            return true
        case "org.freedesktop.DBus.Properties":
            return handleProperties(message, member: member, path: path)
        case GeoClueInterfaces.managerName where path == Self.managerPath:
            return handleManager(message, member: member)
        case GeoClueInterfaces.clientName:
            guard let number = clientNumber(path), clients[number] != nil else { return false }
            guard owns(message, number) else {
                bus.replyError(to: message, name: Self.accessDenied, message: "Access denied")
                return true
            }
            switch member {
            case "Start": startClient(number, message)
            case "Stop": stopClient(number, message)
            default: return false
            }
            return true
        default:
            return false
        }
    }

    private func handleManager(_ message: BusMessage, member: String) -> Bool {
        guard let bus, let peer = message.sender else { return false }
        switch member {
        case "GetClient", "CreateClient":
            if member == "GetClient", let number = sharedClient[peer], let client = clients[number] {
                reply(to: message) { (reply) throws(Errno) in try reply.append(objectPath: client.path) }
                return true
            }
            guard let credentials = credentials(of: message, peer: peer) else { return true }
            lastClient += 1
            let client = Client(number: lastClient, peer: peer, uid: credentials.uid, gid: credentials.gid)
            clients[client.number] = client
            if member == "GetClient" { sharedClient[peer] = client.number }
            log(.debug, "GeoClue: client \(client.number) for \(peer) (uid \(credentials.uid))")
            reply(to: message) { (reply) throws(Errno) in try reply.append(objectPath: client.path) }
        case "DeleteClient":
            guard let path = try? message.readObjectPath() else {
                bus.replyError(to: message, name: Self.invalidArgs, message: "expected an object path")
                return true
            }
            guard let number = clientNumber(path), clients[number] != nil else {
                bus.replyError(to: message, name: Self.invalidArgs, message: "no client \(path)")
                return true
            }
            guard owns(message, number) else {
                bus.replyError(to: message, name: Self.accessDenied, message: "Access denied")
                return true
            }
            remove(number)
            reply(to: message) { _ in }
        case "AddAgent":
            // akloc's [authorization] rules decide, not an agent: accepted so
            // GNOME Shell's agent registers without an error, then unused.
            guard (try? message.readString()) != nil else {
                bus.replyError(to: message, name: Self.invalidArgs, message: "expected a desktop id")
                return true
            }
            reply(to: message) { _ in }
        default:
            return false
        }
        return true
    }

    private func startClient(_ number: UInt32, _ message: BusMessage) {
        guard var client = clients[number], let bus else { return }
        if client.active { return reply(to: message) { _ in } }
        guard !client.desktopID.isEmpty else {
            return bus.replyError(to: message, name: Self.invalidArgs, message: "'DesktopId' property must be set")
        }
        let request = StartRequest(
            client: number, uid: client.uid, gid: client.gid, desktopID: client.desktopID,
            policy: client.thresholds.policy)
        switch handlers.start(request) {
        case .denied(let why):
            log(.info, "GeoClue: client \(number) of uid \(client.uid) (\(client.desktopID)) denied: \(why)")
            bus.replyError(to: message, name: Self.accessDenied, message: why)
        case .started:
            client.active = true
            clients[number] = client
            reply(to: message) { _ in }
            emitPropertiesChanged(client.path, GeoClueInterfaces.clientName, [("Active", .bool(true))])
            updateInUse()
        }
    }

    private func stopClient(_ number: UInt32, _ message: BusMessage) {
        deactivate(number)
        reply(to: message) { _ in }
    }

    private func deactivate(_ number: UInt32) {
        guard var client = clients[number], client.active else { return }
        client.active = false
        clients[number] = client
        handlers.stop(number)
        emitPropertiesChanged(client.path, GeoClueInterfaces.clientName, [("Active", .bool(false))])
        updateInUse()
    }

    private func remove(_ number: UInt32) {
        deactivate(number)
        guard let client = clients.removeValue(forKey: number) else { return }
        if sharedClient[client.peer] == number { sharedClient[client.peer] = nil }
    }

    /// A peer left the bus: its clients go with it (GeoClue does the same).
    private func peerLeft(_ peer: String) {
        peerCredentials[peer] = nil
        let numbers = clients.values.filter { $0.peer == peer }.map(\.number)
        guard !numbers.isEmpty else { return }
        for number in numbers { remove(number) }
        log(.debug, "GeoClue: \(peer) left the bus; its \(numbers.count) client(s) removed")
    }

    private func updateInUse() {
        let now = clients.values.contains { $0.active }
        guard now != inUse else { return }
        inUse = now
        emitPropertiesChanged(Self.managerPath, GeoClueInterfaces.managerName, [("InUse", .bool(now))])
    }

    // MARK: Properties

    private func handleProperties(_ message: BusMessage, member: String, path: String) -> Bool {
        guard let bus else { return false }
        guard let interface = try? message.readString() else {
            bus.replyError(to: message, name: Self.invalidArgs, message: "expected an interface name")
            return true
        }
        guard let properties = properties(of: path, interface: interface) else {
            guard objectExists(path) else { return false }
            bus.replyError(
                to: message, name: "org.freedesktop.DBus.Error.UnknownInterface",
                message: "no interface \(interface) at \(path)")
            return true
        }
        switch member {
        case "GetAll":
            reply(to: message) { (reply) throws(Errno) in try reply.append(properties: properties) }
        case "Get":
            guard let name = try? message.readString(), let value = properties.first(where: { $0.0 == name })?.1
            else {
                bus.replyError(
                    to: message, name: "org.freedesktop.DBus.Error.UnknownProperty", message: "no such property")
                return true
            }
            reply(to: message) { (reply) throws(Errno) in try reply.append(variant: value) }
        case "Set":
            setProperty(message, interface: interface, path: path)
        default:
            return false
        }
        return true
    }

    private func setProperty(_ message: BusMessage, interface: String, path: String) {
        guard let bus else { return }
        guard let name = try? message.readString() else {
            return bus.replyError(to: message, name: Self.invalidArgs, message: "expected a property name")
        }
        let value = try? message.readVariant()
        guard interface == GeoClueInterfaces.clientName, let number = clientNumber(path), var client = clients[number]
        else {
            return bus.replyError(
                to: message, name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "\(name) is read-only")
        }
        guard owns(message, number) else {
            return bus.replyError(to: message, name: Self.accessDenied, message: "Access denied")
        }
        let changed: BusValue
        switch (name, value) {
        case ("DistanceThreshold", .uint32(let metres)?):
            client.thresholds.distance = metres
            changed = .uint32(metres)
        case ("TimeThreshold", .uint32(let seconds)?):
            client.thresholds.time = seconds
            changed = .uint32(seconds)
        case ("RequestedAccuracyLevel", .uint32(let level)?):
            client.requestedLevel = level
            changed = .uint32(level)
        case ("DesktopId", .string(let id)?):
            client.desktopID = id
            changed = .string(id)
        case ("Location", _), ("Active", _):
            return bus.replyError(
                to: message, name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "\(name) is read-only")
        case ("DistanceThreshold", _), ("TimeThreshold", _), ("RequestedAccuracyLevel", _), ("DesktopId", _):
            return bus.replyError(
                to: message, name: Self.invalidArgs,
                message: "\(name) is of type \(name == "DesktopId" ? "s" : "u")")
        default:
            return bus.replyError(
                to: message, name: "org.freedesktop.DBus.Error.UnknownProperty", message: "no property \(name)")
        }
        let policyChanged = client.thresholds != clients[number]?.thresholds
        clients[number] = client
        reply(to: message) { _ in }
        emitPropertiesChanged(client.path, interface, [(name, changed)])
        if policyChanged, client.active { handlers.policyChanged(number, client.thresholds.policy) }
    }

    /// The properties of `interface` at `path`, in the XML's order; nil when
    /// that object does not have it.
    private func properties(of path: String, interface: String) -> [(String, BusValue)]? {
        switch interface {
        case GeoClueInterfaces.managerName where path == Self.managerPath:
            return [("InUse", .bool(inUse)), ("AvailableAccuracyLevel", .uint32(AccuracyLevel.exact.rawValue))]
        case GeoClueInterfaces.clientName:
            guard let number = clientNumber(path), let client = clients[number] else { return nil }
            return [
                ("Location", .objectPath(client.location.map { client.locationPath($0.number) } ?? "/")),
                ("DistanceThreshold", .uint32(client.thresholds.distance)),
                ("TimeThreshold", .uint32(client.thresholds.time)),
                ("DesktopId", .string(client.desktopID)),
                ("RequestedAccuracyLevel", .uint32(client.requestedLevel)),
                ("Active", .bool(client.active)),
            ]
        case GeoClueInterfaces.locationName:
            guard let location = location(at: path) else { return nil }
            return [
                ("Latitude", .double(location.latitude)), ("Longitude", .double(location.longitude)),
                ("Accuracy", .double(location.accuracy)), ("Altitude", .double(location.altitude)),
                ("Speed", .double(location.speed)), ("Heading", .double(location.heading)),
                ("Description", .string(location.description)),
                ("Timestamp", .uint64Pair(location.timestamp.seconds, location.timestamp.microseconds)),
            ]
        default:
            return nil
        }
    }

    // MARK: Objects

    /// The client number in ".../Client/N" (and only there).
    private func clientNumber(_ path: String) -> UInt32? {
        let parts = components(path)
        guard parts.count == 2, parts[0] == "Client" else { return nil }
        return UInt32(parts[1])
    }

    private func location(at path: String) -> GeoClueLocation? {
        let parts = components(path)
        guard parts.count == 4, parts[0] == "Client", parts[2] == "Location", let number = UInt32(parts[1]),
            let index = UInt32(parts[3]), let client = clients[number]
        else { return nil }
        if let current = client.location, current.number == index { return current.value }
        if let previous = client.previous, previous.number == index { return previous.value }
        return nil
    }

    /// The path's parts below /org/freedesktop/GeoClue2; nil outside it.
    private func components(_ path: String) -> [Substring] {
        guard path == Self.root || path.hasPrefix(Self.root + "/") else { return ["-"] }
        return path.dropFirst(Self.root.count).split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            .map { $0 }
    }

    private func objectExists(_ path: String) -> Bool {
        introspection(of: path) != nil
    }

    /// The introspection document of `path`; nil for no such object.
    private func introspection(of path: String) -> String? {
        let parts = components(path)
        let sortedClients = clients.keys.sorted()
        switch parts.count {
        case 0:
            return GeoClueInterfaces.introspection(interfaces: [], children: ["Manager", "Client"])
        case 1 where parts[0] == "Manager":
            return GeoClueInterfaces.introspection(interfaces: [GeoClueInterfaces.manager], children: [])
        case 1 where parts[0] == "Client":
            return GeoClueInterfaces.introspection(interfaces: [], children: sortedClients.map { "\($0)" })
        case 2:
            guard let number = clientNumber(path), let client = clients[number] else { return nil }
            let children = client.location == nil ? [] : ["Location"]
            return GeoClueInterfaces.introspection(interfaces: [GeoClueInterfaces.client], children: children)
        case 3 where parts[2] == "Location":
            guard let number = UInt32(parts[1]), let client = clients[number] else { return nil }
            let numbers = [client.previous?.number, client.location?.number].compactMap { $0 }
            return GeoClueInterfaces.introspection(interfaces: [], children: numbers.map { "\($0)" })
        case 4:
            guard location(at: path) != nil else { return nil }
            return GeoClueInterfaces.introspection(interfaces: [GeoClueInterfaces.location], children: [])
        default:
            return nil
        }
    }

    // MARK: Bus helpers

    /// Whether the caller is the peer that made client `number` (GeoClue
    /// refuses everyone else).
    private func owns(_ message: BusMessage, _ number: UInt32) -> Bool {
        message.sender != nil && clients[number]?.peer == message.sender
    }

    private func credentials(of message: BusMessage, peer: String) -> (uid: UInt32, gid: UInt32)? {
        if let known = peerCredentials[peer] { return known }
        guard let bus else { return nil }
        do {
            let credentials = try bus.credentials(of: message)
            peerCredentials[peer] = credentials
            return credentials
        } catch {
            bus.replyError(to: message, name: Self.accessDenied, message: "cannot tell who is calling: \(error)")
            return nil
        }
    }

    private func reply(to call: BusMessage, _ fill: (BusMessage) throws(Errno) -> Void) {
        guard let bus, call.expectsReply else { return }
        do {
            let reply = try bus.methodReturn(to: call)
            try fill(reply)
            bus.send(reply)
        } catch {
            log(.warning, "GeoClue: cannot answer \(call.member ?? "a call"): \(error)")
        }
    }

    private func emitPropertiesChanged(_ path: String, _ interface: String, _ changed: [(String, BusValue)]) {
        guard let bus else { return }
        do {
            let signal = try bus.signal(
                path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
            try signal.append(string: interface)
            try signal.append(properties: changed)
            try signal.openContainer("a", "s")
            try signal.closeContainer()
            bus.send(signal)
        } catch {
            log(.warning, "GeoClue: cannot signal a property change on \(path): \(error)")
        }
    }
}
