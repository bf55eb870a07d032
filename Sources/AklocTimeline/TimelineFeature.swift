import AklocCore
import AklocFeature
import AklocGeo
import AklocJSON
import AklocPosix
import AklocProtocol
import AklocTrack

/// `[timeline]` as a feature (DESIGN §15, docs/timeline.md): visits and the
/// trips between them, computed from the track journal by the one
/// `VisitDetector`. History: the `visits` and `trips` ops over any range.
/// Live: the same detector fed each point as the track records it, primed
/// with the journal's last `lookBack`, telling the engine each arrival and
/// departure (the `visit` key path, `didVisit`), so live and history see the
/// same fixes and find the same visits.
/// It reads the track the track feature posts (`TrackHistory`), names
/// places with the geo feature's lookups (`PlaceDescriber`) and the saved
/// places (`SavedPlaces`), all facts, so it names no other feature.
public final class TimelineFeature: Feature {
    public typealias Settings = TimelineSettings

    public let name = "timeline"
    private let host: any FeatureHost
    public let settings: TimelineSettings
    private var history: TrackHistory?
    private var describer: PlaceDescriber?
    private var places = SavedPlaces()
    /// The live detector, once the track is posted.
    private var live: VisitDetector?

    /// How far before a range the detector starts, so a visit under way at
    /// its start is found with its real arrival.
    public static let lookBack: Int64 = 2 * 86_400
    /// How far past a range it goes on, at most, to settle the visit or trip
    /// under way at its end.
    public static let lookAhead: Int64 = 2 * 86_400

    public static func make(_ settings: TimelineSettings, host: any FeatureHost) -> TimelineFeature? {
        TimelineFeature(settings: settings, host: host)
    }

    init(settings: TimelineSettings, host: any FeatureHost) {
        self.settings = settings
        self.host = host
    }

    public func start() throws(ComponentError) {
        host.observe(TrackHistory.self) { [weak self] in self?.follow($0) }
        host.observe(PlaceDescriber.self) { [weak self] in self?.describer = $0 }
        host.observe(SavedPlaces.self) { [weak self] in self?.places = $0 }
    }

    public func stop() {}

    /// Primes the live detector with the journal's last `lookBack` (so a
    /// visit under way at start has its real arrival), then feeds it every
    /// point the track records.
    private func follow(_ history: TrackHistory) {
        self.history = history
        var detector = VisitDetector(settings: settings)
        let now = host.clock.wallNow()
        do {
            try history.forEach(
                since: FixTime(secondsSince1970: max(0, now.secondsSince1970 - Self.lookBack)),
                until: FixTime(secondsSince1970: now.secondsSince1970 + 1)
            ) { point in
                if let fix = TimelineFix(point) { _ = detector.add(fix) }
                return true
            }
        } catch {
            host.log(.warning, "the live visit starts without the journal's last days: \(error.message)")
        }
        live = detector
        if let current = detector.currentVisit { tell(current, departed: false) }
        history.onRecord { [weak self] point in self?.record(point) }
    }

    private func record(_ point: TrackPoint) {
        guard var detector = live, let fix = TimelineFix(point) else { return }
        live = nil
        let events = detector.add(fix)
        live = detector
        for event in events {
            switch event {
            case .arrived(let visit): tell(visit, departed: false)
            case .departed(let visit): tell(visit, departed: true)
            case .tripEnded: break
            }
        }
    }

    /// The engine tells the readers of history (the `visit` key path, `didVisit`).
    private func tell(_ found: DetectedVisit, departed: Bool) {
        let visit = TimelineNamer(describer: describer, places: places, uid: nil).visit(found)
        var writer = JSONWriter(capacity: 512)
        writer.value(visit.json)
        host.run(.visited(visit: writer.bytes, departed: departed))
    }

    /// Live visits come from the track: without one they never change.
    public func refusal(of request: Engine.Request) -> ProtocolError? {
        guard history == nil else { return nil }
        let asksVisits: Bool
        switch request {
        case .observe(let keyPath, _, _, _), .get(let keyPath): asksVisits = keyPath.readsHistory
        case .startMonitoringVisits: asksVisits = true
        default: asksVisits = false
        }
        guard asksVisits else { return nil }
        return ProtocolError(
            .unavailable, "no track is recorded ([track] enable = no, or its journal failed): visits come from it")
    }

    public func apply(_ settings: TimelineSettings) {
        host.log(.notice, "[timeline] applies at the next restart; visits keep the running settings")
    }

    public func answer(_ operation: ClientRequest.Operation, id: RequestID?, from client: FeatureClient)
        -> Result<[UInt8], ProtocolError>?
    {
        switch operation {
        case .visits(let query): reply(query, id: id, from: client, trips: false)
        case .trips(let query): reply(query, id: id, from: client, trips: true)
        default: nil
        }
    }

    private func reply(_ query: TimelineQuery, id: RequestID?, from client: FeatureClient, trips: Bool)
        -> Result<[UInt8], ProtocolError>
    {
        // As the track: history says where someone lives and works.
        guard client.isAdmin || host.authorizationStatus(of: client.id) == .authorizedAlways else {
            return .failure(
                ProtocolError(
                    .notAuthorized,
                    "the timeline needs an \"always\" authorization or the admin group: it is made from the track",
                    id: id))
        }
        let range: (since: FixTime, until: FixTime)
        do {
            range = try query.range(now: host.clock.wallNow())
        } catch {
            var error = error
            error.id = id
            return .failure(error)
        }
        guard let history else {
            return .failure(
                ProtocolError(
                    .unavailable, "no track is recorded ([track] enable = no, or its journal failed)", id: id))
        }
        let found: (visits: [DetectedVisit], trips: [TripSummary])
        do {
            found = try Self.compute(history, since: range.since, until: range.until, settings: settings)
        } catch {
            return .failure(ProtocolError(.internalError, error.message, id: id))
        }
        let namer = TimelineNamer(describer: describer, places: places, uid: client.uid)
        let result: JSONValue
        if trips {
            var byArrival: [Double: Visit] = [:]
            for visit in found.visits { byArrival[visit.arrival] = namer.visit(visit) }
            result = ["trips": .array(found.trips.map { namer.trip($0, visits: byArrival).json })]
        } else {
            result = ["visits": .array(found.visits.map { namer.visit($0).json })]
        }
        let bytes = ServerEncoder.reply(id: id, result: result)
        guard bytes.count <= client.replyBudget else {
            return .failure(
                ProtocolError(
                    .badRequest,
                    "\"since\"…\"until\" holds more than fits one reply (\(bytes.count) bytes); ask for a shorter range",
                    id: id))
        }
        return .success(bytes)
    }

    /// The visits and trips overlapping `since...until`, as the detector
    /// finds them running from `lookBack` before it to what settles the end.
    public static func compute(
        _ history: TrackHistory, since: FixTime, until: FixTime, settings: TimelineSettings
    ) throws(TrackError) -> (visits: [DetectedVisit], trips: [TripSummary]) {
        var builder = TimelineBuilder(settings: settings)
        let end = Double(until.secondsSince1970) + Double(until.nanoseconds) / 1e9
        let start = Double(since.secondsSince1970) + Double(since.nanoseconds) / 1e9
        var eventsAtEnd: Int?
        try history.forEach(
            since: FixTime(secondsSince1970: max(0, since.secondsSince1970 - lookBack)),
            until: FixTime(secondsSince1970: until.secondsSince1970 + lookAhead)
        ) { point in
            guard let fix = TimelineFix(point) else { return true }
            if fix.time > end {
                // Past the range only until what was under way at its end is
                // settled: the visit it was in has departed, or a visit that
                // began after it was found.
                if eventsAtEnd == nil { eventsAtEnd = builder.events }
                builder.add(fix)
                guard builder.events != eventsAtEnd, let last = builder.visits.last else { return true }
                return last.departure == nil && last.arrival <= end
            }
            builder.add(fix)
            return true
        }
        let result = builder.result
        return (
            result.visits.filter { $0.arrival <= end && ($0.departure ?? .infinity) >= start },
            result.trips.filter { $0.start <= end && $0.end >= start }
        )
    }
}
