@testable import AklocCore

/// Drives an engine on a manual clock and keeps every output, so tests read
/// like scripts: connect, request, feed fixes at chosen instants, inspect.
struct Harness {
    var engine: Engine
    var now: Instant = .zero
    var log: [Engine.Output] = []
    private var nextToken: RequestToken = 1

    /// `knownDevice` is a receiver whose epoch shape the engine knows (one
    /// TPV, 2D), so its fixes are delivered on their first TPV and tests of
    /// other rules need not wait out the learning (EpochAssemblerTests and
    /// EngineEpochTests cover that). The engine forgets shapes when the watch
    /// starts, so the harness teaches it again before each of its fixes when
    /// it has. nil starts from nothing.
    let knownDevice: String?

    init(
        _ configuration: Engine.Configuration = .init(), restoring state: PersistentState? = nil,
        knownDevice: String? = "/dev/ttyUSB0"
    ) {
        if let state {
            engine = try! Engine(configuration: configuration, restoring: state)
        } else {
            engine = Engine(configuration: configuration)
        }
        self.knownDevice = knownDevice
        teachKnownDevice()
    }

    /// Two whole epochs of one 2D TPV each: the shape is known.
    private mutating func teachKnownDevice() {
        guard let knownDevice, !engine.epochs.knowsShape(of: knownDevice) else { return }
        let seen = Location(
            latitude: 0, longitude: 0, mode: .twoD, timestamp: FixTime(secondsSince1970: 1), device: knownDevice)
        engine.epochs.learn(EpochAssembler.Epoch(fix: seen, receivedAt: .zero))
        engine.epochs.learn(EpochAssembler.Epoch(fix: seen, receivedAt: .zero))
    }

    @discardableResult
    mutating func send(_ input: Engine.Input) -> [Engine.Output] {
        if case .fix = input { teachKnownDevice() }
        let outputs = engine.handle(input, at: now)
        log += outputs
        return outputs
    }

    @discardableResult
    mutating func at(_ seconds: Double, _ input: Engine.Input) -> [Engine.Output] {
        now = .seconds(seconds)
        return send(input)
    }

    @discardableResult
    mutating func connect(
        _ id: SubscriberID, uid: UInt32 = 1000, _ status: AuthorizationStatus = .authorizedAlways,
        active: Bool = true
    ) -> [Engine.Output] {
        send(.connect(id, .init(uid: uid, authorization: status, sessionActive: active)))
    }

    @discardableResult
    mutating func request(_ id: SubscriberID, _ request: Engine.Request) -> [Engine.Output] {
        defer { nextToken += 1 }
        return send(.request(id, nextToken, request))
    }

    @discardableResult
    mutating func start(
        _ id: SubscriberID, _ policy: ThrottlePolicy? = nil, everyEpoch: Bool = false
    ) -> [Engine.Output] {
        request(id, .startUpdatingLocation(policy: policy.map(ThrottlePolicy.Partial.init), everyEpoch: everyEpoch))
    }

    /// The engine's next wanted tick, as the shell would arm it.
    var armed: Instant? {
        for output in log.reversed() { if case .armTimer(let instant) = output { return instant } }
        return nil
    }

    /// Whether the shell was last told to watch gpsd.
    var watching: Bool {
        for output in log.reversed() { if case .watch(let on) = output { return on } }
        return false
    }

    /// Fires every armed tick up to `seconds`, then moves the clock there.
    mutating func run(until seconds: Double) {
        let end = Instant.seconds(seconds)
        while let due = armed, due <= end {
            now = due
            send(.tick)
        }
        now = end
    }
}

/// A fix `metres` north of a base point, with the given fix time in seconds.
func fix(
    north metres: Double = 0, east: Double = 0, second: Int64? = nil, speed: Double? = nil,
    course: Double? = nil, accuracy: Double? = nil, device: String? = "/dev/ttyUSB0"
) -> Location {
    let metresPerDegree = Location.earthRadius * Double.pi / 180
    return Location(
        latitude: 52.0 + metres / metresPerDegree, longitude: 5.0 + east / metresPerDegree, mode: .threeD,
        horizontalAccuracy: accuracy, speed: speed, course: course,
        timestamp: second.map { FixTime(secondsSince1970: 1_700_000_000 + $0) }, device: device)
}

extension Array where Element == Engine.Output {
    func events(for id: SubscriberID) -> [Engine.Event] {
        compactMap { output in
            if case .send(let ids, let event) = output, ids.contains(id) { return event }
            return nil
        }
    }

    /// The `didUpdateLocation` events of one subscriber.
    func updates(for id: SubscriberID) -> [(location: Location, after: Double?)] {
        events(for: id).compactMap { event in
            if case .didUpdateLocation(let location, let after) = event { return (location, after) }
            return nil
        }
    }

    func notifications(for id: SubscriberID) -> [AklocCore.Notification] {
        events(for: id).compactMap { event in
            if case .didGetNotification(let notification) = event { return notification }
            return nil
        }
    }

    func replies(for id: SubscriberID) -> [Result<Engine.Reply, EngineError>] {
        compactMap { output in
            if case .reply(let replyID, _, let result) = output, replyID == id { return result }
            return nil
        }
    }

    func changes(for id: SubscriberID) -> [(keyPath: KeyPath, new: KeyPathValue, old: KeyPathValue?)] {
        events(for: id).compactMap { event in
            if case .change(let keyPath, let new, let old) = event { return (keyPath, new, old) }
            return nil
        }
    }

    var sends: [(ids: [SubscriberID], event: Engine.Event)] {
        compactMap { output in
            if case .send(let ids, let event) = output { return (ids, event) }
            return nil
        }
    }

    var watchChanges: [Bool] {
        compactMap { output in
            if case .watch(let on) = output { return on }
            return nil
        }
    }

    var persists: Int { filter { $0 == .persist }.count }
}

extension Result where Success == Engine.Reply, Failure == EngineError {
    var errorCode: EngineError.Code? {
        if case .failure(let error) = self { return error.code }
        return nil
    }
}
