import AklocCore
import Testing

/// The `visit` key path and `didVisit` (DESIGN §15): the timeline feature
/// tells the engine each arrival and departure; only subscribers that may
/// read history (`always`, admins) hear of them.
@Suite struct EngineVisitTests {
    static let arrival = Array(#"{"arrival":"2026-11-30T07:02:11.000Z"}"#.utf8)
    static let departure = Array(#"{"arrival":"2026-11-30T07:02:11.000Z","departure":"2026-11-30T11:30:05.000Z"}"#.utf8)

    static func code(_ reply: Result<Engine.Reply, EngineError>?) -> EngineError.Code? {
        guard case .failure(let error)? = reply else { return nil }
        return error.code
    }

    static func visits(_ outputs: [Engine.Output], for id: SubscriberID) -> [[UInt8]] {
        outputs.events(for: id).compactMap { if case .didVisit(let visit) = $0 { visit } else { nil } }
    }

    @Test func anArrivalThenTheSameVisitWithItsDeparture() {
        var harness = Harness()
        harness.connect(1)
        #expect(harness.request(1, .startMonitoringVisits).replies(for: 1) == [.success(.done)])
        let initial = harness.request(1, .observe(KeyPath(.visit), initial: true, old: true, policy: nil))
        #expect(initial.changes(for: 1).map(\.new) == [.null])
        harness.send(.visited(visit: Self.arrival, departed: false))
        #expect(harness.request(1, .get(KeyPath(.visit))).replies(for: 1) == [.success(.value(.json(Self.arrival)))])
        harness.send(.visited(visit: Self.departure, departed: true))
        #expect(Self.visits(harness.log, for: 1) == [Self.arrival, Self.departure])
        let changes = harness.log.changes(for: 1).dropFirst()
        #expect(changes.map(\.new) == [.json(Self.arrival), .null], "the key path holds the visit under way")
        #expect(changes.map(\.old) == [.null, .json(Self.arrival)])
        #expect(harness.request(1, .get(KeyPath(.visit))).replies(for: 1) == [.success(.value(.null))])
        // Stopped: no more didVisit, the key path still observed.
        harness.request(1, .stopMonitoringVisits)
        let later = harness.send(.visited(visit: Self.arrival, departed: false))
        #expect(Self.visits(later, for: 1).isEmpty)
        #expect(later.changes(for: 1).map(\.new) == [.json(Self.arrival)])
    }

    @Test func onlyAlwaysSubscribersAndAdminsReadVisits() {
        var harness = Harness()
        harness.connect(1, .authorizedWhenInUse)
        harness.connect(2, .denied)
        harness.send(.connect(3, .init(uid: 0, authorization: .notDetermined, isAdmin: true)))
        harness.connect(4)
        for id: SubscriberID in [1, 2] {
            #expect(Self.code(harness.request(id, .startMonitoringVisits).replies(for: id).first) == .notAuthorized)
            let observe = harness.request(id, .observe(KeyPath(.visit), initial: true, old: false, policy: nil))
            #expect(Self.code(observe.replies(for: id).first) == .notAuthorized)
            #expect(Self.code(harness.request(id, .get(KeyPath(.visit))).replies(for: id).first) == .notAuthorized)
        }
        for id: SubscriberID in [3, 4] {
            #expect(harness.request(id, .startMonitoringVisits).replies(for: id) == [.success(.done)])
        }
        let told = harness.send(.visited(visit: Self.arrival, departed: false))
        #expect(Self.visits(told, for: 1).isEmpty && Self.visits(told, for: 2).isEmpty)
        #expect(Self.visits(told, for: 3) == [Self.arrival] && Self.visits(told, for: 4) == [Self.arrival])
        // Authorization or admin rights taken away by a reload: no more visits.
        harness.send(.adminChanged(3, false))
        harness.send(.authorizationChanged(4, .authorizedWhenInUse))
        let after = harness.send(.visited(visit: Self.departure, departed: true))
        #expect(Self.visits(after, for: 3).isEmpty && Self.visits(after, for: 4).isEmpty)
        #expect(Self.code(harness.request(3, .get(KeyPath(.visit))).replies(for: 3).first) == .notAuthorized)
        #expect(throws: KeyPathError.self) { try KeyPath(parsing: "visit.arrival") }
    }
}
