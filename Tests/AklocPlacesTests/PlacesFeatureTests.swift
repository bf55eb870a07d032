import AklocCore
import AklocFeature
import AklocGeo
import AklocJSON
import AklocProtocol
import AklocTestSupport
import Glibc
import Testing

@testable import AklocPlaces

/// `PlacesFeature` against a fake host on virtual time: the places ops
/// through `answer`, the places on disk, the shared ones posted for other
/// features, and region monitoring, whose crossings go back to the engine.
@Suite final class PlacesFeatureTests {
    let directory = makeTemporaryDirectory()
    let host: FakeHost
    let feature: PlacesFeature

    init() throws {
        let host = FakeHost(stateDirectory: directory)
        let feature = try #require(host.sync { PlacesFeature.make(PlacesSettings(), host: host) })
        try host.sync { try feature.start() }
        self.host = host
        self.feature = feature
    }

    deinit { removeTree(directory) }

    static let home = (latitude: 52.5, longitude: 13.4)
    static let work = (latitude: 52.52, longitude: 13.41)

    static func draft(
        _ name: String, at point: (latitude: Double, longitude: Double)? = home, radius: Double? = 100,
        note: String? = nil, shared: Bool = false
    ) -> ClientRequest.Operation {
        .places(
            .savePlace(
                PlaceDraft(
                    name: name, latitude: point?.latitude, longitude: point?.longitude, radius: radius, note: note,
                    shared: shared)))
    }

    static func fix(_ latitude: Double, _ longitude: Double) -> Location {
        Location(latitude: latitude, longitude: longitude, horizontalAccuracy: 5)
    }

    static let inside = fix(home.latitude, home.longitude)
    /// About 1.1 km south of home.
    static let outside = fix(home.latitude - 0.01, home.longitude)

    typealias Answer = Result<JSONValue, ProtocolError>

    /// The reply's `result`, or the error.
    func ask(_ operation: ClientRequest.Operation, from client: FeatureClient) throws -> Answer {
        switch try #require(feature.answer(operation, id: .int(1), from: client)) {
        case .success(let line):
            #expect(line.last == 0x0A)
            return .success(try #require(try JSONValue.parse(line.dropLast()).get()["result"]))
        case .failure(let error):
            return .failure(error)
        }
    }

    func error(_ operation: ClientRequest.Operation, from client: FeatureClient) throws -> ProtocolError? {
        if case .failure(let error) = try ask(operation, from: client) { error } else { nil }
    }

    func names(_ result: Answer) -> [String]? {
        guard case .success(let json) = result, case .array(let list)? = json["places"] else { return nil }
        return list.map { $0.stringValue ?? $0["name"]?.stringValue ?? "?" }
    }

    /// A client of uid 1000 that saves `places` and then monitors every place it sees.
    func monitoring(
        saving places: [ClientRequest.Operation] = [], status: AuthorizationStatus = .authorizedAlways,
        sessionActive: Bool = true
    ) throws -> FeatureClient {
        let client = host.connectClient(uid: 1000, status: status, sessionActive: sessionActive)
        for place in places { _ = try ask(place, from: client).get() }
        _ = try ask(.places(.startMonitoring(names: nil)), from: client).get()
        return client
    }

    /// The `regionsChanged` inputs run, in order: who, inside what, and which crossings.
    var regionInputs: [(id: SubscriberID, inside: [String], crossed: [RegionCrossing.Kind])] {
        host.inputs.compactMap { input in
            guard case .regionsChanged(let id, let inside, let crossed) = input else { return nil }
            return (id, inside, crossed.map(\.kind))
        }
    }

    func monitoringChanged(_ id: SubscriberID) -> [Bool] {
        host.inputs.compactMap { input in
            guard case .monitoringChanged(id, let on) = input else { return nil }
            return on
        }
    }

    // MARK: Ops

    @Test func savePlaceListAndDeleteAPlaceOnDisk() throws {
        try host.sync {
            let user = host.connectClient(uid: 1000, status: .authorizedWhenInUse)
            host.time.advance(by: 60)
            let saved = try ask(Self.draft("Home", radius: 50, note: "green door"), from: user).get()
            let place = try #require(saved["place"])
            #expect(place["name"] == .string("Home"))
            #expect(place["owner"] == .int(1000))
            #expect(place["radius"]?.doubleValue == 50)
            #expect(place["note"] == .string("green door"))
            #expect(place["createdAt"] == .string(host.time.wallNow().iso8601))
            #expect(place["coordinate"]?["latitude"]?.doubleValue == Self.home.latitude)
            #expect(readFile(directory + "/places/1000.json")?.contains("green door") == true)

            _ = try ask(Self.draft("Work", at: Self.work), from: user).get()
            #expect(names(try ask(.places(.places), from: user)) == ["Home", "Work"])
            // Another user sees none of them.
            let other = host.connectClient(uid: 1001, status: .authorizedAlways)
            #expect(names(try ask(.places(.places), from: other)) == [])
        }
        // A feature started on the same directory (a restart) finds what was acknowledged.
        let again = FakeHost(stateDirectory: directory)
        try again.sync {
            let restarted = try #require(PlacesFeature.make(PlacesSettings(), host: again))
            try restarted.start()
            #expect(restarted.places.owned(by: 1000).map(\.name) == ["Home", "Work"])
        }
        try host.sync {
            let user = host.connectClient(uid: 1000, status: .authorizedWhenInUse)
            #expect(try ask(.places(.deletePlace(name: "Home")), from: user).get() == .null)
            #expect(names(try ask(.places(.places), from: user)) == ["Work"])
            _ = try ask(.places(.deletePlace(name: "Work")), from: user).get()
            #expect(readFile(directory + "/places/1000.json") == nil, "the last place takes its file with it")
        }
    }

    @Test func savingTheCurrentLocationNeedsTheRightAndALiveFix() throws {
        try host.sync {
            let stranger = host.connectClient(uid: 1001, status: .notDetermined)
            let user = host.connectClient(uid: 1000, status: .authorizedAlways)
            let here = Self.draft("Here", at: nil)
            #expect(try error(here, from: user)?.code == .unavailable, "no fix yet")
            host.fix = Self.fix(48.1, 11.6)
            #expect(try error(here, from: stranger)?.code == .notAuthorized)
            let saved = try ask(here, from: user).get()
            #expect(saved["place"]?["coordinate"]?["latitude"]?.doubleValue == 48.1)
            #expect(saved["place"]?["coordinate"]?["longitude"]?.doubleValue == 11.6)
            // Paused: no live fix to save, though the engine still holds one.
            host.paused = true
            let paused = try error(Self.draft("There", at: nil), from: user)
            #expect(paused?.code == .unavailable)
            #expect(paused?.message.contains("coordinate") == true, "\(String(describing: paused))")
        }
    }

    @Test func badInputNamesTheFieldBeforeAnythingElseIsLookedAt() throws {
        try host.sync {
            let user = host.connectClient(uid: 1000, status: .authorizedAlways)
            // Neither a right nor a fix: the argument is still what is refused first.
            let stranger = host.connectClient(uid: 1001, status: .notDetermined)
            let cases: [(ClientRequest.Operation, String)] = [
                (Self.draft(""), "name"),
                (Self.draft("   "), "name"),
                (Self.draft(String(repeating: "n", count: 65)), "name"),
                (Self.draft("tab\there"), "name"),
                (Self.draft("Home", radius: 0), "radius"),
                (Self.draft("Home", radius: 100_001), "radius"),
                (Self.draft("Home", radius: .nan), "radius"),
                (Self.draft("Home", note: String(repeating: "x", count: 1025)), "note"),
                (Self.draft("Home", at: (91, 0)), "coordinate"),
                (Self.draft("", at: nil), "name"),
                (Self.draft("Home", at: nil, radius: -1), "radius"),
            ]
            for (operation, field) in cases {
                for client in [user, stranger] {
                    let refused = try error(operation, from: client)
                    #expect(
                        refused?.code == .badRequest, "\(operation) from \(client.uid): \(String(describing: refused))")
                    #expect(refused?.message.hasPrefix("\"\(field)\"") == true, "\(String(describing: refused))")
                }
            }
            #expect(feature.places.visible(to: 1000).isEmpty, "nothing was saved")

            let unknown = try error(.places(.deletePlace(name: "Nowhere")), from: user)
            #expect(unknown?.code == .notFound)
            #expect(unknown?.message.contains("\"Nowhere\"") == true)
            let watch = try error(.places(.startMonitoring(names: ["Nowhere"])), from: user)
            #expect(watch?.code == .notFound)
            #expect(watch?.message.contains("\"Nowhere\"") == true)
            #expect(host.added.isEmpty, "no monitoring started")
        }
    }

    // MARK: Shared places

    /// How many times the shared places were posted.
    var sharedPosts: Int { host.posted.count { $0 is SharedPlaces } }
    var lastShared: SharedPlaces? { host.posted.last { $0 is SharedPlaces } as? SharedPlaces }

    @Test func sharedPlacesNeedAnAdminAndArePostedForOtherFeatures() throws {
        try host.sync {
            #expect(sharedPosts == 1, "the start posts what it loaded")
            #expect(lastShared?.places.isEmpty == true)
            let user = host.connectClient(uid: 1000, status: .authorizedAlways)
            let admin = host.connectClient(uid: 0, status: .notDetermined, isAdmin: true)
            #expect(try error(Self.draft("Depot", shared: true), from: user)?.code == .forbidden)
            _ = try ask(Self.draft("Mine"), from: user).get()
            #expect(sharedPosts == 1, "a private place is nobody else's business")

            _ = try ask(Self.draft("Depot", shared: true), from: admin).get()
            #expect(lastShared?.places.map(\.name) == ["Depot"])
            // Everyone sees it.
            #expect(names(try ask(.places(.places), from: user)) == ["Mine", "Depot"])
            // Saved again unshared: it leaves the shared list.
            _ = try ask(Self.draft("Depot", shared: false), from: admin).get()
            #expect(lastShared?.places.isEmpty == true)
            _ = try ask(Self.draft("Depot", shared: true), from: admin).get()
            _ = try ask(.places(.deletePlace(name: "Depot")), from: admin).get()
            #expect(lastShared?.places.isEmpty == true)
            #expect(sharedPosts == 5)
            // Every change of any place is posted whole too (the timeline names visits by them).
            #expect((host.posted.last as? SavedPlaces)?.owned(by: 1000).map(\.name) == ["Mine"])
        }
    }

    // MARK: Monitoring

    @Test func theEpochsSubscriberExistsOnlyWhileSomeoneMonitors() throws {
        try host.sync {
            let a = host.connectClient(uid: 1000, status: .authorizedAlways)
            let b = host.connectClient(uid: 1001, status: .authorizedWhenInUse)
            _ = try ask(Self.draft("Home"), from: a).get()
            #expect(host.added.isEmpty)

            #expect(names(try ask(.places(.startMonitoring(names: nil)), from: a)) == ["Home"])
            #expect(monitoringChanged(a.id) == [true])
            let epochs = try #require(host.added.first)
            #expect(host.changes == [.added(epochs, .daemon, .withSockets)])
            let start = try #require(host.startRequest(of: epochs))
            #expect(start.policy == nil && start.everyEpoch)

            // B sees no places, so watches none, but still monitors (new ones count).
            #expect(names(try ask(.places(.startMonitoring(names: nil)), from: b)) == [])
            #expect(host.added.count == 1, "one subscriber for every monitor")

            #expect(names(try ask(.places(.stopMonitoring(names: nil)), from: a)) == [])
            #expect(monitoringChanged(a.id) == [true, false])
            #expect(host.removed.isEmpty, "B still monitors")
            // A client that leaves is forgotten; the engine hears of it from the host.
            feature.clientGone(b.id)
            #expect(host.removed == [epochs])
            #expect(monitoringChanged(b.id) == [true])
            // Stopping what was never started is no error and changes nothing.
            #expect(names(try ask(.places(.stopMonitoring(names: nil)), from: a)) == [])
            feature.clientGone(a.id)
            #expect(host.changes.count == 2)
        }
    }

    @Test func monitoringNeedsAuthorization() throws {
        try host.sync {
            for status in [AuthorizationStatus.notDetermined, .denied] {
                let client = host.connectClient(status: status)
                let refused = try error(.places(.startMonitoring(names: nil)), from: client)
                #expect(refused?.code == .notAuthorized)
                #expect(refused?.message.contains(status.rawValue) == true)
            }
            #expect(host.added.isEmpty)
        }
    }

    @Test func crossingsGoBackToTheEngineAsRegionsChangedWithTheirKinds() throws {
        try host.sync {
            let a = host.connectClient(uid: 1000, status: .authorizedAlways)
            _ = try ask(Self.draft("Home"), from: a).get()
            _ = try ask(Self.draft("Work", at: Self.work), from: a).get()
            _ = try ask(.places(.startMonitoring(names: ["Home"])), from: a).get()
            let before = host.inputs.count

            host.time.advance(by: 1)
            host.deliverEpoch(Self.outside)
            #expect(host.inputs.count == before, "deciding outside at first is silent")
            host.time.advance(by: 1)
            host.deliverEpoch(Self.inside)
            host.time.advance(by: 1)
            host.deliverEpoch(Self.fix(Self.home.latitude + 0.0001, Self.home.longitude))
            host.time.advance(by: 1)
            host.deliverEpoch(Self.outside)
            let crossings = regionInputs
            #expect(crossings.map(\.id) == [a.id, a.id])
            #expect(crossings.map(\.inside) == [["Home"], []])
            #expect(crossings.map(\.crossed) == [[.enter], [.exit]])
            // Each crossing carries the saved place and the epoch that crossed.
            for input in host.inputs {
                guard case .regionsChanged(_, _, let crossed) = input, let crossing = crossed.first else { continue }
                let place = try JSONValue.parse(crossing.place).get()
                #expect(place["name"] == .string("Home"))
                #expect(place["owner"] == .int(1000))
                #expect([Self.inside, Self.outside].contains(crossing.location))
            }
        }
    }

    @Test func onlyClientsTheHostSaysMayReceiveLocationsAreFed() throws {
        try host.sync {
            let a = try monitoring(saving: [Self.draft("Home")])
            // When in use, without an active session: may monitor, is not told positions.
            let b = try monitoring(status: .authorizedWhenInUse, sessionActive: false)
            host.deliverEpoch(Self.inside)
            #expect(regionInputs.map(\.id) == [a.id])
            // B is now authorized always: its monitor hears the next epoch, its first.
            host.setStatus(.authorizedAlways, of: b.id)
            host.time.advance(by: 1)
            host.deliverEpoch(Self.inside)
            #expect(regionInputs.map(\.id) == [a.id, b.id])
            #expect(regionInputs.last?.crossed == [.enter])
        }
    }

    @Test func aDeletedPlaceLeavesRegionsAndANewOneIsWatchedByThoseWatchingAll() throws {
        try host.sync {
            let a = try monitoring(saving: [Self.draft("Home"), Self.draft("Yard", radius: 500)])
            host.deliverEpoch(Self.inside)
            #expect(regionInputs.last?.inside == ["Home", "Yard"])

            _ = try ask(.places(.deletePlace(name: "Home")), from: a).get()
            #expect(regionInputs.last?.inside == ["Yard"], "gone at once")
            #expect(regionInputs.last?.crossed == [], "leaving by deletion is not a crossing")

            // A new place: undetermined until the next epoch decides it.
            _ = try ask(Self.draft("Porch", radius: 20), from: a).get()
            #expect(regionInputs.last?.inside == ["Yard"])
            host.time.advance(by: 1)
            host.deliverEpoch(Self.inside)
            #expect(regionInputs.last?.inside == ["Yard", "Porch"])
            #expect(regionInputs.last?.crossed == [.enter])
        }
    }

    @Test func stoppingSomeNamesKeepsWatchingTheRest() throws {
        try host.sync {
            let a = host.connectClient(uid: 1000, status: .authorizedAlways)
            _ = try ask(Self.draft("Home"), from: a).get()
            _ = try ask(Self.draft("Yard", radius: 500), from: a).get()
            #expect(names(try ask(.places(.startMonitoring(names: ["Home"])), from: a)) == ["Home"])
            #expect(names(try ask(.places(.startMonitoring(names: ["Yard"])), from: a)) == ["Home", "Yard"])
            host.deliverEpoch(Self.inside)
            #expect(names(try ask(.places(.stopMonitoring(names: ["Home"])), from: a)) == ["Yard"])
            #expect(regionInputs.last?.inside == ["Yard"])
            #expect(host.removed.isEmpty)
            #expect(names(try ask(.places(.stopMonitoring(names: ["Yard"])), from: a)) == [])
            #expect(monitoringChanged(a.id) == [true, true, false])
            #expect(host.removed.count == 1)
        }
    }

    @Test func aWatchOfAClientThatLeftHearsNothingMore() throws {
        try host.sync {
            let a = try monitoring(saving: [Self.draft("Home")])
            let b = try monitoring()
            feature.clientGone(a.id)
            host.deliverEpoch(Self.inside)
            #expect(regionInputs.map(\.id) == [b.id])
            // A place saved later does not resurrect A's watch.
            _ = try ask(Self.draft("Yard", radius: 500), from: b).get()
            #expect(!regionInputs.contains { $0.id == a.id })
        }
    }

    @Test(.enabled(if: TestMount.shouldRun, "needs root to mount a read-only tmpfs"))
    func aWriteThatFailsAnswersStorageFailedAndChangesNothing() throws {
        let mount = try TestMount(sizeKiB: 64)
        defer { mount.unmount() }
        let state = mount.path + "/state"
        #expect(mkdir(state, 0o700) == 0)
        let host = FakeHost(stateDirectory: state)
        let feature = try #require(host.sync { PlacesFeature.make(PlacesSettings(), host: host) })
        try host.sync {
            try feature.start()
            let a = host.connectClient(uid: 0, status: .authorizedAlways, isAdmin: true)
            #expect(feature.answer(Self.draft("Home", shared: true), id: nil, from: a)?.isSuccess == true)
            _ = feature.answer(.places(.startMonitoring(names: nil)), id: nil, from: a)
        }
        try mount.inject(.readOnly)
        host.sync {
            let a = host.connectClient(uid: 0, status: .authorizedAlways, isAdmin: true)
            let before = (feature.places, host.posted.count, host.inputs.count)
            for operation in [
                Self.draft("Work", at: Self.work, shared: true), Self.draft("Home", radius: 300, shared: true),
                .places(.deletePlace(name: "Home")),
            ] {
                guard case .failure(let error)? = feature.answer(operation, id: nil, from: a) else {
                    Issue.record("\(operation) was acknowledged on a read-only filesystem")
                    continue
                }
                #expect(error.code == .storageFailed)
                #expect(error.message.contains("EROFS") && error.message.contains("nothing was changed"), "\(error)")
            }
            #expect(feature.places == before.0)
            #expect(host.posted.count == before.1, "no shared places posted")
            #expect(host.inputs.count == before.2, "no monitor was told")
            #expect(host.messages(at: .error).count == 3)
        }
        try mount.repair(.readOnly)
        host.sync {
            let a = host.connectClient(uid: 0, status: .authorizedAlways, isAdmin: true)
            #expect(feature.answer(.places(.deletePlace(name: "Home")), id: nil, from: a)?.isSuccess == true)
        }
    }
}

extension Result {
    fileprivate var isSuccess: Bool {
        if case .success = self { true } else { false }
    }
}
