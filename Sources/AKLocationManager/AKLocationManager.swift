import AklocCore
import AklocPosix
import AklocProtocol
import Dispatch
import Glibc

/// The seed's minimum and maximum update intervals, seconds.
public typealias AKLocationManagerTimeInterval = (min: Double, max: Double)

/// AKLocationManager's API over aklocd (DESIGN §13, docs/clients.md): the
/// same members and defaults as on iOS, so ported code changes only its
/// import. The daemon does the work (first fix, throttling, authorization);
/// this object keeps one connection to it, re-sends what it subscribed to
/// when aklocd restarts, and calls the delegate and observers on
/// `callbackQueue`.
///
/// Thread-safe: every member may be used from any thread. State lives on a
/// private serial queue; callbacks never run on it.
public final class AKLocationManager: @unchecked Sendable {
    // @unchecked: every stored var below is touched only on `queue`.

    /// `$AKLOC_SOCKET` when set, else aklocd's default socket.
    public static var defaultSocketPath: String {
        DefaultSocket.resolve(
            explicit: nil, environment: getenv(DefaultSocket.environmentVariable).map { String(cString: $0) })
    }

    public let socketPath: String
    /// Where the delegate, the observers and `events` are served from.
    public let callbackQueue: DispatchQueue

    private let queue = DispatchQueue(label: "akloc.AKLocationManager")
    private var core: ManagerCore
    private var socket: DaemonSocket?
    private var timer: DispatchSourceTimer?
    private weak var delegateStorage: AKLocationManagerDelegate?
    private var observers: [(target: Weak, keyPath: String)] = []
    private var streams: [UInt64: AsyncStream<AKLocationManagerEvent>.Continuation] = [:]
    private var oneShots: [UInt64: CheckedContinuation<Result<CLLocation, AKLocationManagerError>, Never>] = [:]
    private var nextToken: UInt64 = 1
    private var connectionStateStorage = AKLocationManagerConnectionState.disconnected

    // @unchecked: the observer is only called on `callbackQueue`, as the caller asked.
    private final class Weak: @unchecked Sendable {
        weak var object: AKLocationManagerObserver?
        init(_ object: AKLocationManagerObserver) { self.object = object }
    }

    /// A manager for aklocd at `socketPath` (default `defaultSocketPath`).
    /// It connects at the first request that needs the daemon.
    public init(socketPath: String? = nil, callbackQueue: DispatchQueue = .main) {
        self.socketPath = socketPath ?? AKLocationManager.defaultSocketPath
        self.callbackQueue = callbackQueue
        core = ManagerCore(socketPath: self.socketPath)
    }

    deinit {
        timer?.cancel()
        // The last reference may go on any thread, while the socket's read
        // handler runs on `queue`: the socket is closed there, and released
        // there, as every other call on it is (DaemonSocket).
        if let socket {
            self.socket = nil
            queue.async { socket.close() }
        }
        for stream in streams.values { stream.finish() }
        for oneShot in oneShots.values { oneShot.resume(returning: .failure(.connection("the manager was released"))) }
    }

    // MARK: - Delegate and state

    /// The delegate object to receive update events (held weakly).
    public var delegate: AKLocationManagerDelegate? {
        get { queue.sync { delegateStorage } }
        set { queue.sync { delegateStorage = newValue } }
    }

    /// The most recently retrieved location; nil if none has been retrieved.
    public var myLocation: CLLocation? { queue.sync { core.myLocation } }

    /// This connection's authorization, as aklocd last said.
    public var authorizationStatus: AuthorizationStatus { queue.sync { core.authorizationStatus } }

    public var connectionState: AKLocationManagerConnectionState { queue.sync { connectionStateStorage } }

    // MARK: - Configuration

    /// From this speed (m/s) on, updates come every minimum interval; the initial value is 0.4 (walking).
    public var updateSpeed: CLLocationSpeed {
        get { queue.sync { core.settings.policy.updateSpeed } }
        set { changePolicy { $0.updateSpeed = newValue } }
    }

    /// Minimum and maximum seconds between updates; initially 5 and 300.
    public var updateLocationTimeInterval: AKLocationManagerTimeInterval {
        get { queue.sync { (core.settings.policy.minInterval, core.settings.policy.maxInterval) } }
        set {
            changePolicy {
                $0.minInterval = newValue.min
                $0.maxInterval = newValue.max
            }
        }
    }

    /// Metres to move before an update under the maximum interval; 0 (off) initially. Not in the seed.
    public var distanceFilter: CLLocationDistance {
        get { queue.sync { core.settings.policy.distanceFilter } }
        set { changePolicy { $0.distanceFilter = newValue } }
    }

    /// Fixes less accurate than this (metres) are skipped; 0 (off) initially. Not in the seed.
    public var desiredAccuracy: CLLocationAccuracy {
        get { queue.sync { core.settings.policy.desiredAccuracy } }
        set { changePolicy { $0.desiredAccuracy = newValue } }
    }

    /// Also deliver every epoch unthrottled through `didUpdateLocation`
    /// (CoreLocation's own stream, which AKLocationManager forwarded); off initially.
    public var deliversEveryEpoch: Bool {
        get { queue.sync { core.settings.everyEpoch } }
        set { changeSettings { $0.everyEpoch = newValue } }
    }

    /// First-location attempts, one a second, before
    /// `locationManagerCantDetectFirstLocation`; initially 5. Takes effect at the next start.
    public var firstLocationAttempts: Int {
        get { queue.sync { core.settings.firstLocationAttempts } }
        set {
            guard newValue >= 1 else {
                reject("firstLocationAttempts must be at least 1 (got \(newValue))")
                return
            }
            changeSettings { $0.firstLocationAttempts = newValue }
        }
    }

    // MARK: - Updates

    /// Connects to aklocd now rather than at the first request (the delegate
    /// then hears `didChangeConnectionState`, and `didGetError` if it is not there).
    public func connect() {
        run(.connect)
    }

    /// Requests permission to use location services (default `.whenInUse`).
    public func requestForUpdatingLocation(_ requestType: AKLocationManagerRequestType = .whenInUse) {
        run(.requestAuthorization(requestType))
    }

    /// Starts the generation of updates that report the current location.
    public func startUpdatingLocation() {
        run(.startUpdating)
    }

    /// Requests permission, then starts updates.
    public func startUpdatingLocationWithRequest(_ requestType: AKLocationManagerRequestType = .whenInUse) {
        run(.requestAuthorization(requestType))
        run(.startUpdating)
    }

    public func stopUpdatingLocation() {
        run(.stopUpdating)
    }

    /// One location, forced past the throttle, delivered through
    /// `didUpdateLocation` (or `didGetError` when there is none within 10 s).
    public func requestLocation() {
        run(.requestLocation(token: nil, timeout: ClientRequest.defaultRequestLocationTimeout))
    }

    // MARK: - Visits

    /// Starts the delivery of visits through `locationManager(_:didVisit:)`
    /// (CoreLocation's `startMonitoringVisits`): each arrival, then the same
    /// visit with its departure, as aklocd finds them in the track
    /// (docs/timeline.md). Needs `authorizedAlways` or an admin; otherwise
    /// the delegate gets `didGetError(.request(code: "notAuthorized", …))`.
    /// Sent again after a reconnect.
    public func startMonitoringVisits() {
        run(.startMonitoringVisits)
    }

    public func stopMonitoringVisits() {
        run(.stopMonitoringVisits)
    }

    // MARK: - Observers

    /// Calls `target.observeValue(forKeyPath:of:change:)` on each change of
    /// `keyPath` (`myLocation`, `myLocation.speed`, `rawLocation`, `state`,
    /// `authorizationStatus`, `source`: docs/protocol.md §7), throttled by
    /// this manager's settings for location paths. The target is held weakly.
    /// An unknown key path is reported through `didGetError`.
    public func addObserver(_ target: AKLocationManagerObserver, forKeyPath keyPath: String) {
        let parsed: KeyPath
        do {
            parsed = try KeyPath(parsing: keyPath)
        } catch {
            let message = error.message
            queue.async { [self] in
                deliver(.didGetError(.request(code: ErrorCode.unknownKeyPath.rawValue, message: message)))
            }
            return
        }
        let box = Weak(target)
        queue.async { [self] in
            observers.append((box, keyPath))
            perform(core.handle(.observe(parsed), at: now(), unitRandom: .random(in: 0..<1)))
        }
    }

    /// Removes every observer and ends the observations.
    public func removeObserver() {
        queue.async { [self] in
            let keyPaths = Set(observers.compactMap { try? KeyPath(parsing: $0.keyPath) })
            observers = []
            for keyPath in keyPaths { perform(core.handle(.unobserve(keyPath), at: now())) }
        }
    }

    /// Removes one observer; a key path nobody observes any more is ended.
    public func removeObserver(_ target: AKLocationManagerObserver) {
        let box = Weak(target)
        queue.async { [self] in
            let before = Set(observers.map(\.keyPath))
            observers.removeAll { $0.target.object == nil || $0.target.object === box.object }
            let after = Set(observers.map(\.keyPath))
            for text in before.subtracting(after) {
                if let keyPath = try? KeyPath(parsing: text) { perform(core.handle(.unobserve(keyPath), at: now())) }
            }
        }
    }

    // MARK: - Swift concurrency

    /// Every event from now on, as the delegate sees them. Each access is a
    /// new stream; it ends when the manager is released. The newest 256 are
    /// kept for a consumer that falls behind.
    public var events: AsyncStream<AKLocationManagerEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: AKLocationManagerEvent.self, bufferingPolicy: .bufferingNewest(256))
        queue.sync {
            let token = nextToken
            nextToken += 1
            streams[token] = continuation
            continuation.onTermination = { [weak self] _ in
                guard let self else { return }
                queue.async { self.streams[token] = nil }
            }
        }
        return stream
    }

    /// One fresh location (`requestLocation` on the wire): aklocd waits up to
    /// `timeout` seconds for a fix; the call fails when there is none, when
    /// the service is paused, or when aklocd cannot be reached in that time.
    public func location(timeout: Double = ClientRequest.defaultRequestLocationTimeout)
        async throws(AKLocationManagerError) -> CLLocation
    {
        guard timeout > 0, timeout <= ClientRequest.maxRequestLocationTimeout else {
            throw .invalidSetting("timeout must be more than 0 and at most 3600 s (got \(timeout))")
        }
        let result = await withCheckedContinuation { continuation in
            queue.async { [self] in
                let token = nextToken
                nextToken += 1
                oneShots[token] = continuation
                perform(core.handle(.requestLocation(token: token, timeout: timeout), at: now()))
            }
        }
        return try result.get()
    }

    // MARK: - Shell

    private func now() -> Instant {
        Instant(nanoseconds: Int64(clamping: DispatchTime.now().uptimeNanoseconds))
    }

    private func run(_ input: ManagerCore.Input) {
        queue.async { [self] in perform(core.handle(input, at: now(), unitRandom: .random(in: 0..<1))) }
    }

    private func changePolicy(_ change: @escaping @Sendable (inout ThrottlePolicy) -> Void) {
        queue.async { [self] in
            var policy = core.settings.policy
            change(&policy)
            do throws(ThrottlePolicyError) {
                try policy.validate()
            } catch {
                reject(error.message)
                return
            }
            var settings = core.settings
            settings.policy = policy
            perform(core.handle(.settingsChanged(settings), at: now()))
        }
    }

    private func changeSettings(_ change: @escaping @Sendable (inout ManagerCore.Settings) -> Void) {
        queue.async { [self] in
            var settings = core.settings
            change(&settings)
            perform(core.handle(.settingsChanged(settings), at: now()))
        }
    }

    private func reject(_ message: String) {
        queue.async { [self] in deliver(.didGetError(.invalidSetting(message))) }
    }

    /// Carries out the core's actions; runs on `queue`.
    private func perform(_ actions: [ManagerCore.Action]) {
        for action in actions {
            switch action {
            case .open:
                open()
            case .send(let bytes):
                socket?.send(bytes)
            case .close:
                socket?.close()
                socket = nil
            case .deliver(let event):
                deliver(event)
            case .complete(let token, let result):
                oneShots.removeValue(forKey: token)?.resume(returning: result)
            case .armTimer(let instant):
                arm(instant)
            }
        }
    }

    private func open() {
        socket?.close()
        socket = nil
        do {
            socket = try DaemonSocket(path: socketPath, queue: queue) { [weak self] input in
                guard let self else { return }
                if case .closed = input { socket = nil }
                if case .ioFailed = input { socket = nil }
                perform(core.handle(input, at: now(), unitRandom: .random(in: 0..<1)))
            }
            perform(core.handle(.opened, at: now()))
        } catch {
            perform(core.handle(.openFailed(error.description), at: now(), unitRandom: .random(in: 0..<1)))
        }
    }

    private func arm(_ instant: Instant?) {
        timer?.cancel()
        timer = nil
        guard let instant else { return }
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: DispatchTime(uptimeNanoseconds: UInt64(max(instant.nanoseconds, 0))))
        source.setEventHandler { [weak self] in
            guard let self else { return }
            perform(core.handle(.tick, at: now(), unitRandom: .random(in: 0..<1)))
        }
        timer = source
        source.activate()
    }

    /// Hands one event to the streams now and to the delegate and observers on `callbackQueue`.
    private func deliver(_ event: AKLocationManagerEvent) {
        if case .connectionStateChanged(let state) = event { connectionStateStorage = state }
        for stream in streams.values { stream.yield(event) }
        callbackQueue.async { [self] in
            switch event {
            case .didChange(let change):
                let targets = queue.sync {
                    observers.filter { $0.keyPath == change.keyPath }.compactMap(\.target.object)
                }
                for target in targets { target.observeValue(forKeyPath: change.keyPath, of: self, change: change) }
            default:
                guard let delegate else { return }
                switch event {
                case .didGetFirstLocation(let location):
                    delegate.locationManager(self, didGetFirstLocation: location)
                case .didUpdateLocation(let location, let interval?):
                    delegate.locationManager(self, didUpdateLocation: location, afterTimeInterval: interval)
                case .didUpdateLocation(let location, nil):
                    delegate.locationManager(self, didUpdateLocation: location)
                case .didGetError(let error):
                    delegate.locationManager(self, didGetError: error)
                case .didGetNotification(let notification):
                    delegate.locationManager(self, didGetNotification: notification)
                case .connectionStateChanged(let state):
                    delegate.locationManager(self, didChangeConnectionState: state)
                case .didVisit(let visit):
                    delegate.locationManager(self, didVisit: visit)
                case .didChange:
                    break
                }
            }
        }
    }
}
