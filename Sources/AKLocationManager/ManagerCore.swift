import AklocCore
import AklocJSON
import AklocProtocol

/// Everything `AKLocationManager` decides, with no I/O (DESIGN §1): the link
/// to aklocd and its reconnect backoff, what to (re)subscribe, which reply
/// answers what, the first-fix attempts, and what to tell the delegate. The
/// shell feeds it inputs with the monotonic `now` and carries out the
/// returned actions; tests drive it with a manual clock and no socket.
struct ManagerCore {
    /// What the caller configured; `policy` is always valid.
    struct Settings: Hashable {
        var policy = ThrottlePolicy()
        var everyEpoch = false
        var firstLocationAttempts = 5
    }

    enum Input {
        /// Connect now (a no-op while connected or waiting to reconnect).
        case connect
        case startUpdating
        case stopUpdating
        case requestAuthorization(AKLocationManagerRequestType)
        /// `token` nil: the answer goes to the delegate; else to `complete`.
        case requestLocation(token: UInt64?, timeout: Double)
        case observe(KeyPath)
        case unobserve(KeyPath)
        case startMonitoringVisits
        case stopMonitoringVisits
        case settingsChanged(Settings)
        /// The socket connected (the daemon's hello is next).
        case opened
        case openFailed(String)
        case line([UInt8])
        case lineTooLong(Int)
        /// End of file; `pendingBytes` of a line had arrived without its newline.
        case closed(pendingBytes: Int)
        case ioFailed(String)
        /// The timer armed by the last `.armTimer` fired.
        case tick
    }

    enum Action: Equatable {
        /// Connect the socket, then feed `.opened` or `.openFailed`.
        case open
        case send([UInt8])
        /// Drop the socket (without feeding `.closed`).
        case close
        case deliver(AKLocationManagerEvent)
        case complete(UInt64, Result<CLLocation, AKLocationManagerError>)
        case armTimer(Instant?)
    }

    enum Link: Equatable {
        case idle
        case awaitingHello
        case connected
        case backingOff(until: Instant)
    }

    /// What a reply answers.
    enum Purpose: Equatable {
        case startUpdating
        case stopUpdating
        case authorization
        case observe(KeyPath)
        case unobserve(KeyPath)
        case location(token: UInt64?)
        case startMonitoringVisits
        case stopMonitoringVisits
    }

    struct LocationRequest: Equatable {
        var token: UInt64?
        var timeout: Double
        var deadline: Instant
        /// The request id while it is on the wire; nil until sent (again, after a reconnect).
        var sentAs: Int64?
    }

    /// Past the daemon's own `timeout`, how long a `requestLocation` waits
    /// for aklocd to be reachable at all.
    static let requestGrace: Double = 2

    private(set) var link = Link.idle
    private(set) var settings = Settings()
    private(set) var myLocation: CLLocation?
    private(set) var authorizationStatus: AuthorizationStatus = .notDetermined
    private(set) var updating = false
    private(set) var observed: Set<KeyPath> = []
    private(set) var monitoringVisits = false
    private(set) var firstFix: FirstFixLoop?
    private(set) var locationRequests: [LocationRequest] = []
    private var updatingAccepted = false
    private var authorizationRequest: AKLocationManagerRequestType?
    private var pending: [Int64: Purpose] = [:]
    private var nextID: Int64 = 1
    private var backoff: Backoff
    /// One connection error per outage, not one per retry.
    private var outageReported = false
    private var daemonStopping = false
    private let socketPath: String

    init(socketPath: String, backoff: Backoff = Backoff(initial: 0.25, multiplier: 2, maximum: 5, jitter: 0.2)) {
        self.socketPath = socketPath
        self.backoff = backoff
    }

    /// `unitRandom` (0..<1) jitters a reconnect delay, if this input causes one.
    mutating func handle(_ input: Input, at now: Instant, unitRandom: Double = 0) -> [Action] {
        var actions: [Action] = []
        switch input {
        case .connect:
            ensureOpen(&actions)
        case .startUpdating:
            // A second start only replaces the policy: the daemon runs no
            // new first-fix loop for it, so neither does the manager.
            if !updating { beginFirstFix(at: now, &actions) }
            updating = true
            updatingAccepted = false
            ensureOpen(&actions)
            if link == .connected { sendStart(&actions) }
        case .stopUpdating:
            updating = false
            updatingAccepted = false
            firstFix = nil
            if link == .connected {
                send(.engine(.stopUpdatingLocation), for: .stopUpdating, &actions)
            }
        case .requestAuthorization(let type):
            authorizationRequest = type
            ensureOpen(&actions)
            if link == .connected {
                send(.engine(.requestAuthorization(type.wire)), for: .authorization, &actions)
            }
        case .requestLocation(let token, let timeout):
            locationRequests.append(
                LocationRequest(
                    token: token, timeout: timeout,
                    deadline: now.advanced(bySeconds: timeout + ManagerCore.requestGrace)))
            ensureOpen(&actions)
            if link == .connected { sendUnsentLocationRequests(&actions) }
        case .observe(let keyPath):
            let (inserted, _) = observed.insert(keyPath)
            ensureOpen(&actions)
            if inserted, link == .connected { sendObserve(keyPath, &actions) }
        case .unobserve(let keyPath):
            if observed.remove(keyPath) != nil, link == .connected {
                send(.engine(.unobserve(keyPath)), for: .unobserve(keyPath), &actions)
            }
        case .startMonitoringVisits:
            monitoringVisits = true
            ensureOpen(&actions)
            if link == .connected { send(.engine(.startMonitoringVisits), for: .startMonitoringVisits, &actions) }
        case .stopMonitoringVisits:
            if monitoringVisits, link == .connected {
                send(.engine(.stopMonitoringVisits), for: .stopMonitoringVisits, &actions)
            }
            monitoringVisits = false
        case .settingsChanged(let new):
            let policyChanged = new.policy != settings.policy || new.everyEpoch != settings.everyEpoch
            settings = new
            if policyChanged, link == .connected {
                // Both ops replace a live subscription's policy in place.
                if updating { sendStart(&actions) }
                for keyPath in observed.sorted(by: { $0.description < $1.description }) where keyPath.isLocation {
                    sendObserve(keyPath, &actions)
                }
            }
        case .opened:
            break
        case .openFailed(let reason):
            linkFailed(
                .connection("cannot connect to aklocd at \(socketPath): \(reason)"), at: now, unitRandom, &actions)
        case .line(let bytes):
            receive(bytes, at: now, unitRandom: unitRandom, &actions)
        case .lineTooLong(let limit):
            drop(.badMessage("aklocd sent a line longer than \(limit) bytes"), at: now, unitRandom, &actions)
        case .closed(let pendingBytes):
            let error: AKLocationManagerError?
            if pendingBytes > 0 {
                error = .badMessage(
                    "aklocd closed the connection in the middle of a line (\(pendingBytes) bytes without a newline)")
            } else if link == .awaitingHello {
                error = .connection("aklocd at \(socketPath) closed the connection before saying hello")
            } else {
                error = daemonStopping ? nil : .connection("aklocd at \(socketPath) closed the connection")
            }
            linkFailed(error, at: now, unitRandom, &actions)
        case .ioFailed(let reason):
            drop(.connection("talking to aklocd at \(socketPath): \(reason)"), at: now, unitRandom, &actions)
        case .tick:
            tick(at: now, &actions)
        }
        actions.append(.armTimer(nextWake))
        return actions
    }

    /// The earliest moment something is due: a reconnect, a first-fix
    /// attempt, a location request's deadline.
    var nextWake: Instant? {
        var wake: Instant?
        func consider(_ instant: Instant?) {
            guard let instant else { return }
            wake = wake.map { min($0, instant) } ?? instant
        }
        if case .backingOff(let until) = link { consider(until) }
        consider(firstFix?.nextAttempt)
        for request in locationRequests { consider(request.deadline) }
        return wake
    }

    // MARK: - Link

    private mutating func ensureOpen(_ actions: inout [Action]) {
        guard link == .idle else { return }
        link = .awaitingHello
        daemonStopping = false
        actions.append(.deliver(.connectionStateChanged(.connecting)))
        actions.append(.open)
    }

    /// A broken connection: close it, then wait and reconnect.
    private mutating func drop(
        _ error: AKLocationManagerError, at now: Instant, _ unitRandom: Double, _ actions: inout [Action]
    ) {
        actions.append(.close)
        linkFailed(error, at: now, unitRandom, &actions)
    }

    private mutating func linkFailed(
        _ error: AKLocationManagerError?, at now: Instant, _ unitRandom: Double, _ actions: inout [Action]
    ) {
        pending = [:]
        updatingAccepted = false
        for index in locationRequests.indices { locationRequests[index].sentAs = nil }
        if let error, !outageReported {
            outageReported = true
            actions.append(.deliver(.didGetError(error)))
        }
        let delay = backoff.nextDelay(unitRandom: unitRandom)
        link = .backingOff(until: now.advanced(bySeconds: delay))
        actions.append(.deliver(.connectionStateChanged(.waitingToReconnect(seconds: delay))))
    }

    private mutating func tick(at now: Instant, _ actions: inout [Action]) {
        if case .backingOff(let until) = link, now >= until {
            link = .idle
            ensureOpen(&actions)
        }
        if let due = firstFix?.nextAttempt, now >= due,
            firstFix?.attempt(hasFreshFix: false, at: now) == .cantDetectFirstLocation
        {
            actions.append(.deliver(.didGetError(.locationManagerCantDetectFirstLocation)))
        }
        let expired = locationRequests.filter { now >= $0.deadline }
        locationRequests.removeAll { now >= $0.deadline }
        for request in expired {
            if let id = request.sentAs { pending[id] = nil }
            let error = AKLocationManagerError.request(
                code: ErrorCode.timeout.rawValue,
                message: "no location from aklocd within \(request.timeout + ManagerCore.requestGrace) s")
            answer(request, .failure(error), &actions)
        }
    }

    // MARK: - Requests

    private mutating func send(_ operation: ClientRequest.Operation, for purpose: Purpose, _ actions: inout [Action]) {
        _ = sendReturningID(operation, for: purpose, &actions)
    }

    private mutating func sendReturningID(
        _ operation: ClientRequest.Operation, for purpose: Purpose, _ actions: inout [Action]
    ) -> Int64 {
        let id = nextID
        nextID += 1
        pending[id] = purpose
        actions.append(.send(ClientRequest(id: .int(id), operation: operation).encodedLine()))
        return id
    }

    private mutating func sendStart(_ actions: inout [Action]) {
        send(
            .engine(.startUpdatingLocation(policy: .init(settings.policy), everyEpoch: settings.everyEpoch)),
            for: .startUpdating, &actions)
    }

    private mutating func sendObserve(_ keyPath: KeyPath, _ actions: inout [Action]) {
        send(
            .engine(
                .observe(keyPath, initial: false, old: true, policy: keyPath.isLocation ? .init(settings.policy) : nil)),
            for: .observe(keyPath), &actions)
    }

    private mutating func sendUnsentLocationRequests(_ actions: inout [Action]) {
        for index in locationRequests.indices where locationRequests[index].sentAs == nil {
            let request = locationRequests[index]
            locationRequests[index].sentAs = sendReturningID(
                .engine(.requestLocation(timeout: request.timeout)), for: .location(token: request.token), &actions)
        }
    }

    private mutating func beginFirstFix(at now: Instant, _ actions: inout [Action]) {
        // The client runs its own attempts, so `firstLocationAttempts` is
        // honoured per manager; the daemon's loop (its own count) only
        // supplies the first location.
        var loop = FirstFixLoop(attempts: settings.firstLocationAttempts)
        if loop.begin(hasFreshFix: false, at: now) == .cantDetectFirstLocation {
            actions.append(.deliver(.didGetError(.locationManagerCantDetectFirstLocation)))
        }
        firstFix = loop
    }

    /// The daemon's hello: resend everything this manager wants.
    private mutating func resubscribe(at now: Instant, _ actions: inout [Action]) {
        if let type = authorizationRequest, authorizationStatus == .notDetermined {
            send(.engine(.requestAuthorization(type.wire)), for: .authorization, &actions)
        }
        if updating {
            beginFirstFix(at: now, &actions)
            sendStart(&actions)
        }
        for keyPath in observed.sorted(by: { $0.description < $1.description }) {
            sendObserve(keyPath, &actions)
        }
        if monitoringVisits { send(.engine(.startMonitoringVisits), for: .startMonitoringVisits, &actions) }
        sendUnsentLocationRequests(&actions)
    }

    // MARK: - Messages

    private mutating func receive(_ bytes: [UInt8], at now: Instant, unitRandom: Double, _ actions: inout [Action]) {
        let message: ServerEvent
        switch ServerEvent.decode(bytes) {
        case .success(let decoded): message = decoded
        case .failure(let error):
            // A hello of another protocol version ends here too, saying which.
            drop(
                .badMessage("aklocd sent a line that is not the protocol: \(error.message)"), at: now, unitRandom,
                &actions)
            return
        }
        if case .hello(let hello) = message {
            guard link == .awaitingHello else {
                drop(.badMessage("aklocd said hello twice"), at: now, unitRandom, &actions)
                return
            }
            link = .connected
            backoff.reset()
            outageReported = false
            authorizationStatus = hello.authorizationStatus
            actions.append(.deliver(.connectionStateChanged(.connected)))
            resubscribe(at: now, &actions)
            return
        }
        guard link == .connected else {
            drop(.badMessage("aklocd did not start with hello"), at: now, unitRandom, &actions)
            return
        }
        switch message {
        case .reply(let id, let result):
            guard case .int(let number)? = id, let purpose = pending.removeValue(forKey: number) else { return }
            reply(purpose, id: number, result, &actions)
        default:
            event(message, at: now, &actions)
        }
    }

    private mutating func reply(
        _ purpose: Purpose, id: Int64, _ result: Result<JSONValue, ProtocolError>, _ actions: inout [Action]
    ) {
        switch (purpose, result) {
        case (.location, _):
            guard let index = locationRequests.firstIndex(where: { $0.sentAs == id }) else { return }
            let request = locationRequests.remove(at: index)
            switch result {
            case .success(let value):
                guard let location = CLLocation(json: value) else {
                    answer(
                        request, .failure(.badMessage("requestLocation was answered with \(value.jsonString)")),
                        &actions)
                    return
                }
                myLocation = location
                answer(request, .success(location), &actions)
            case .failure(let error):
                answer(request, .failure(.request(code: error.code.rawValue, message: error.message)), &actions)
            }
        case (.startUpdating, .success):
            updatingAccepted = true
        case (.startUpdating, .failure(let error)) where error.code == .notAuthorized:
            // The daemon told the delegate with `locationManagerNotAuthorized`.
            break
        case (.authorization, .success(let value)):
            if let status = value["authorizationStatus"]?.stringValue.flatMap(AuthorizationStatus.init(rawValue:)) {
                authorizationStatus = status
            }
        case (_, .failure(let error)):
            actions.append(.deliver(.didGetError(.request(code: error.code.rawValue, message: error.message))))
        case (_, .success):
            break
        }
    }

    private mutating func answer(
        _ request: LocationRequest, _ result: Result<CLLocation, AKLocationManagerError>, _ actions: inout [Action]
    ) {
        if let token = request.token {
            actions.append(.complete(token, result))
        } else {
            switch result {
            case .success(let location): actions.append(.deliver(.didUpdateLocation(location, afterTimeInterval: nil)))
            case .failure(let error): actions.append(.deliver(.didGetError(error)))
            }
        }
    }

    private mutating func event(_ event: ServerEvent, at now: Instant, _ actions: inout [Action]) {
        switch event {
        case .didGetFirstLocation(let location):
            myLocation = location
            // Stale after a stop: the daemon had sent it before it saw the stop.
            guard updating else { return }
            _ = firstFix?.fixArrived()
            actions.append(.deliver(.didGetFirstLocation(location)))
        case .didUpdateLocation(let location, let afterTimeInterval):
            myLocation = location
            guard updating else { return }
            actions.append(.deliver(.didUpdateLocation(location, afterTimeInterval: afterTimeInterval)))
        case .didGetError:
            // The daemon's first-fix error counts its own attempts; this
            // manager's loop reports after `firstLocationAttempts` instead.
            break
        case .didGetNotification(let notification):
            notified(notification, at: now, &actions)
            actions.append(.deliver(.didGetNotification(notification)))
        case .change(let change):
            guard observed.contains(change.keyPath) else { return }
            if change.keyPath == KeyPath(.myLocation), let location = change.newLocation { myLocation = location }
            if change.keyPath == KeyPath(.authorizationStatus),
                let status = change.new.stringValue.flatMap(AuthorizationStatus.init(rawValue:))
            {
                authorizationStatus = status
            }
            actions.append(
                .deliver(
                    .didChange(
                        AKLocationManagerChange(keyPath: change.keyPath.description, new: change.new, old: change.old)))
            )
        case .didVisit(let visit):
            // Stale after a stop, as an update is.
            guard monitoringVisits else { return }
            actions.append(.deliver(.didVisit(visit)))
        case .hello, .reply, .didEnterRegion, .didExitRegion, .unknown:
            // Region events have no delegate call; events of a newer
            // protocol revision are ignored, as the protocol asks.
            break
        }
    }

    private mutating func notified(
        _ notification: AKLocationManagerNotification, at now: Instant, _ actions: inout [Action]
    ) {
        switch notification {
        case .authorizedAlways, .authorizedWhenInUse:
            authorizationStatus = notification == .authorizedAlways ? .authorizedAlways : .authorizedWhenInUse
            // Updates asked for before the grant start now.
            if updating, !updatingAccepted, !pending.values.contains(.startUpdating) { sendStart(&actions) }
        case .authorizationDenied:
            authorizationStatus = .denied
        case .resumed:
            if updating { beginFirstFix(at: now, &actions) }
        case .daemonStopping:
            daemonStopping = true
        default:
            break
        }
    }
}
