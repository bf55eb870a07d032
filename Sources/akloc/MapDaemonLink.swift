import AklocCore
import AklocHTTP
import AklocJSON
import AklocProtocol
import Dispatch
import Glibc
import Synchronization

/// The map's own connection to aklocd, as the invoking user: observes
/// `myLocation` and the receiver's `satellites` (the sky panel), names each fix with `reverseGeocode` when the daemon has
/// it, and turns both into server-sent events for the page. When aklocd
/// goes away (a restart) it says so (`status` with `connected: false`, the
/// page shows "reconnecting") and connects again every second.
final class MapDaemonLink: Sendable {
    private let socketPath: String
    private let publish: @Sendable ([UInt8]) -> Void
    /// The latest status, location and sky events, for a stream that opens later.
    private let latest = Mutex<(status: [UInt8], location: [UInt8], sky: [UInt8])>(([], [], []))
    private let thread = DispatchQueue(label: "akloc.map.daemon")

    init(socketPath: String, publish: @escaping @Sendable ([UInt8]) -> Void) {
        self.socketPath = socketPath
        self.publish = publish
        latest.withLock { $0.status = Self.event("status", ["connected": false, "reason": "connecting"]) }
    }

    /// What a new stream starts with.
    var currentEvents: [UInt8] { latest.withLock { $0.status + $0.location + $0.sky } }

    func start() {
        thread.async { [self] in
            while true {
                runOnce()
                Glibc.sleep(1)
            }
        }
    }

    static func event(_ name: String, _ data: JSONValue) -> [UInt8] {
        ServerSentEvent.bytes(event: name, data: data.jsonBytes)
    }

    private func setStatus(_ value: JSONValue) {
        let bytes = Self.event("status", value)
        let changed = latest.withLock { state in
            defer { state.status = bytes }
            return state.status != bytes
        }
        if changed { publish(bytes) }
    }

    private func runOnce() {
        let connection: DaemonConnection
        // What arrives while the second observe waits for its reply (the first one's initial location).
        var early: [ServerEvent] = []
        do throws(CLIError) {
            connection = try DaemonConnection(path: socketPath, timeout: AklocCLI.replyTimeout)
            // Fast enough to follow a moving boat, as the daemon's throttle allows.
            let policy = ThrottlePolicy.Partial(minInterval: 1, maxInterval: 60)
            _ = try connection.call(
                .engine(.observe(AklocCore.KeyPath(.myLocation), initial: true, old: false, policy: policy)))
            do throws(CLIError) {
                _ = try connection.call(
                    .engine(.observe(AklocCore.KeyPath(.satellites), initial: true, old: false, policy: policy)),
                    onEvent: { early.append($0.event) })
            } catch {
                // An aklocd before the satellites key path: the page draws no sky panel.
                guard error.message.contains("(unknownKeyPath)") else { throw error }
            }
        } catch {
            setStatus(["connected": false, "reason": .string(error.message)])
            return
        }
        setStatus(["connected": true])
        var geocoding = true
        var pending: [JSONValue] = []
        func take(_ event: ServerEvent) {
            guard case .change(let change) = event else { return }
            if change.keyPath == AklocCore.KeyPath(.satellites) {
                // The sky as aklocd gives it (null before the first SKY); sent as it comes, it needs no lookup.
                let bytes = Self.event("sky", change.new)
                latest.withLock { $0.sky = bytes }
                publish(bytes)
                return
            }
            // A location without a position (none yet) is not sent: the page keeps the last one.
            guard change.keyPath == AklocCore.KeyPath(.myLocation), MapData.coordinate(of: change.new) != nil
            else { return }
            pending.append(change.new)
        }
        early.forEach(take)
        do {
            while true {
                while let location = pending.popLast() {
                    pending.removeAll()  // only the newest matters
                    var data: [String: JSONValue] = ["location": location]
                    if geocoding, let latitude = location["latitude"]?.doubleValue,
                        let longitude = location["longitude"]?.doubleValue
                    {
                        do {
                            let result = try connection.call(
                                .geo(.reverseGeocode(coordinate: GeoPoint(latitude: latitude, longitude: longitude))),
                                onEvent: { take($0.event) })
                            if let placemark = result["placemark"] { data["placemark"] = placemark }
                        } catch {
                            // An aklocd without the lookups (or its data) keeps the map going without names.
                            if error.message.contains("unknownOp") { geocoding = false }
                        }
                    }
                    let bytes = Self.event("location", .object(data))
                    latest.withLock { $0.location = bytes }
                    publish(bytes)
                }
                connection.setTimeout(0)
                guard case (_, let message)? = try connection.nextMessage() else { break }
                take(message)
                connection.setTimeout(AklocCLI.replyTimeout)
            }
        } catch {
            setStatus(["connected": false, "reason": .string(error.message)])
            return
        }
        setStatus(["connected": false, "reason": "aklocd closed the connection"])
    }
}
