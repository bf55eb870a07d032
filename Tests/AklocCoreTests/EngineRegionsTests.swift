import AklocCore
import Testing

/// The engine's share of region monitoring (DESIGN §9): a monitoring
/// subscriber keeps the gpsd watch open, and `regions` is a key path with
/// `myLocation`'s authorization whose value the shell's monitor sets.
@Suite struct EngineRegionsTests {
    @Test func monitoringKeepsTheWatchOpenOnlyForAnAuthorizedSubscriber() {
        var harness = Harness()
        harness.connect(1)
        harness.at(1, .sourceConnected(name: "gpsd"))
        #expect(!harness.watching)
        harness.send(.monitoringChanged(1, true))
        #expect(harness.watching)
        harness.send(.monitoringChanged(1, false))
        #expect(!harness.watching)

        harness.connect(2, .denied)
        harness.send(.monitoringChanged(2, true))
        #expect(!harness.watching, "a denied subscriber gets no fixes, so it needs no watch")
        harness.send(.authorizationChanged(2, .authorizedAlways))
        #expect(harness.watching)
        harness.send(.disconnect(2))
        #expect(!harness.watching)
    }

    @Test func regionsIsObservedWithOldAndGetReturnsTheNames() {
        var harness = Harness()
        harness.connect(1)
        harness.send(.monitoringChanged(1, true))
        let initial = harness.request(1, .observe(KeyPath(.regions), initial: true, old: true, policy: nil))
        #expect(initial.changes(for: 1).map(\.new) == [.names([])])
        harness.send(.regionsChanged(1, ["Haven"]))
        harness.send(.regionsChanged(1, ["Haven"]))
        harness.send(.regionsChanged(1, ["Haven", "Dock"]))
        harness.send(.regionsChanged(1, []))
        let changes = harness.log.changes(for: 1).dropFirst()
        #expect(changes.map(\.new) == [.names(["Haven"]), .names(["Haven", "Dock"]), .names([])], "only on change")
        #expect(changes.map(\.old) == [.names([]), .names(["Haven"]), .names(["Haven", "Dock"])])
        harness.send(.regionsChanged(1, ["Dock"]))
        #expect(harness.request(1, .get(KeyPath(.regions))).replies(for: 1) == [.success(.value(.names(["Dock"])))])
        // Stopping clears the value.
        harness.send(.monitoringChanged(1, false))
        #expect(harness.request(1, .get(KeyPath(.regions))).replies(for: 1) == [.success(.value(.names([])))])
    }

    static func code(_ reply: Result<Engine.Reply, EngineError>?) -> EngineError.Code? {
        guard case .failure(let error)? = reply else { return nil }
        return error.code
    }

    @Test func regionsNeedsLocationAuthorization() throws {
        var harness = Harness()
        harness.connect(1, .denied)
        let observe = harness.request(1, .observe(KeyPath(.regions), initial: true, old: false, policy: nil))
        #expect(Self.code(observe.replies(for: 1).first) == .notAuthorized)
        let get = harness.request(1, .get(KeyPath(.regions)))
        #expect(Self.code(get.replies(for: 1).first) == .notAuthorized)
        // whenInUse without a session: no value, as for myLocation.
        harness.connect(2, .authorizedWhenInUse, active: false)
        harness.send(.regionsChanged(2, ["Haven"]))
        #expect(harness.request(2, .get(KeyPath(.regions))).replies(for: 2) == [.success(.value(.null))])
        #expect(try KeyPath(parsing: "regions") == KeyPath(.regions))
        #expect(throws: KeyPathError.self) { try KeyPath(parsing: "regions.count") }
    }
}
