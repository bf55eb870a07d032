import AklocCore
import Testing

@Suite struct EngineObservationTests {
    func ready() -> Harness {
        var harness = Harness()
        harness.connect(1)
        return harness
    }

    @Test func stateChangesOnlyWhenTheValueChanges() {
        var harness = ready()
        let observed = harness.request(1, .observe(KeyPath(.state), initial: true, old: true, policy: nil))
        #expect(observed.changes(for: 1).map(\.new) == [.string("sourceUnavailable")])
        #expect(observed.changes(for: 1).first?.old == nil)
        harness.at(1, .sourceConnected(name: "gpsd"))
        harness.at(2, .noFix(device: nil))
        harness.at(3, .fix(fix(second: 3)))
        harness.at(4, .fix(fix(second: 4)))
        harness.at(5, .noFix(device: nil))
        harness.at(6, .sourceDisconnected)
        harness.at(7, .sourceDisconnected)
        let changes = harness.log.changes(for: 1).dropFirst()
        #expect(
            changes.map(\.new) == ["searching", "running", "searching", "sourceUnavailable"].map(KeyPathValue.string))
        #expect(
            changes.map(\.old) == ["sourceUnavailable", "searching", "running", "searching"].map(KeyPathValue.string))
    }

    @Test func sourceAndItsValue() {
        var harness = ready()
        harness.request(1, .observe(KeyPath(.source), initial: false, old: false, policy: nil))
        harness.at(1, .sourceConnected(name: "gpsd://localhost:2947"))
        #expect(harness.log.changes(for: 1).map(\.new) == [.string("gpsd://localhost:2947")])
        #expect(
            harness.request(1, .get(KeyPath(.source))).replies(for: 1) == [
                .success(.value(.string("gpsd://localhost:2947")))
            ])
        harness.at(2, .sourceDisconnected)
        #expect(harness.log.changes(for: 1).last?.new == .null)
        #expect(harness.request(1, .get(KeyPath(.source))).replies(for: 1) == [.success(.value(.null))])
    }

    @Test func initialSendsNullWithoutAFix() {
        var harness = ready()
        let outputs = harness.request(1, .observe(KeyPath(.myLocation), initial: true, old: false, policy: nil))
        #expect(outputs.changes(for: 1).map(\.new) == [.null])
        #expect(outputs.replies(for: 1) == [.success(.done)])
    }

    @Test func myLocationMembersFollowTheirOwnThrottle() throws {
        var harness = ready()
        harness.send(.sourceConnected(name: "gpsd"))
        harness.request(
            1,
            .observe(
                KeyPath(.myLocation, member: .speed), initial: false, old: true,
                policy: .init(try ThrottlePolicy(minInterval: 2))))
        harness.request(1, .observe(KeyPath(.rawLocation, member: .latitude), initial: false, old: false, policy: nil))
        var mine: [Double] = []
        var raw = 0
        for second in 0...10 {
            let outputs = harness.at(
                Double(second), .fix(fix(north: Double(second), second: Int64(second), speed: 1 + Double(second))))
            for change in outputs.changes(for: 1) {
                if change.keyPath.root == .myLocation {
                    mine.append(Double(second))
                    let previous = second == 0 ? KeyPathValue.null : .number(Double(second - 1))
                    #expect(change.old == previous)
                } else {
                    raw += 1
                }
            }
        }
        #expect(mine == [0, 2, 4, 6, 8, 10])
        #expect(raw == 11)
    }

    @Test func oldCarriesTheValueTheObserverLastSaw() {
        var harness = ready()
        harness.send(.sourceConnected(name: "gpsd"))
        harness.at(0, .fix(fix(second: 0, speed: 3)))
        harness.request(1, .observe(KeyPath(.rawLocation, member: .speed), initial: false, old: true, policy: nil))
        harness.at(1, .fix(fix(second: 1, speed: 4)))
        harness.at(2, .fix(fix(second: 2, speed: 5)))
        let changes = harness.log.changes(for: 1)
        #expect(changes.map(\.new) == [.number(4), .number(5)])
        #expect(changes.map(\.old) == [.number(3), .number(4)])
    }

    @Test func reobservingReplacesOptionsAndUnobserveEndsIt() {
        var harness = ready()
        harness.send(.sourceConnected(name: "gpsd"))
        harness.request(1, .observe(KeyPath(.rawLocation, member: .speed), initial: false, old: true, policy: nil))
        harness.request(1, .observe(KeyPath(.rawLocation, member: .speed), initial: false, old: false, policy: nil))
        let outputs = harness.at(1, .fix(fix(second: 1, speed: 4)))
        #expect(outputs.changes(for: 1).count == 1)
        #expect(outputs.changes(for: 1).first?.old == nil)
        #expect(
            harness.request(1, .unobserve(KeyPath(.rawLocation, member: .speed))).replies(for: 1) == [.success(.done)])
        #expect(harness.at(2, .fix(fix(second: 2, speed: 4))).changes(for: 1).isEmpty)
        #expect(
            harness.request(1, .unobserve(KeyPath(.rawLocation, member: .speed))).replies(for: 1).first?.errorCode
                == .badRequest)
        #expect(harness.request(1, .unobserve(KeyPath(.state))).replies(for: 1).first?.errorCode == .badRequest)
    }

    @Test func locationPathsNeedAuthorization() {
        var harness = Harness()
        harness.connect(1, .notDetermined)
        harness.connect(2, uid: 2, .denied)
        for id: SubscriberID in [1, 2] {
            for keyPath in [KeyPath(.myLocation), KeyPath(.rawLocation, member: .speed)] {
                #expect(
                    harness.request(id, .observe(keyPath, initial: true, old: false, policy: nil)).replies(for: id)
                        .first?.errorCode == .notAuthorized)
                #expect(harness.request(id, .get(keyPath)).replies(for: id).first?.errorCode == .notAuthorized)
            }
            #expect(
                harness.request(id, .get(KeyPath(.state))).replies(for: id) == [
                    .success(.value(.string("sourceUnavailable")))
                ])
            #expect(
                harness.request(id, .get(KeyPath(.authorizationStatus))).replies(for: id).first
                    == .success(.value(.string(id == 1 ? "notDetermined" : "denied"))))
        }
    }

    @Test func getReturnsTheLatestFixForBothLocationRoots() throws {
        var harness = ready()
        harness.send(.sourceConnected(name: "gpsd"))
        #expect(harness.request(1, .get(KeyPath(.myLocation))).replies(for: 1) == [.success(.value(.null))])
        harness.at(1, .fix(fix(second: 1, speed: 2)))
        harness.at(2, .fix(fix(second: 2, speed: 3)))
        #expect(
            harness.request(1, .get(KeyPath(.myLocation, member: .speed))).replies(for: 1) == [
                .success(.value(.number(3)))
            ])
        #expect(
            harness.request(1, .get(KeyPath(.rawLocation))).replies(for: 1) == [
                .success(.value(.location(fix(second: 2, speed: 3))))
            ])
        harness.at(3, .sourceDisconnected)
        #expect(
            harness.request(1, .get(KeyPath(.rawLocation, member: .speed))).replies(for: 1) == [
                .success(.value(.number(3)))
            ])
    }
}
