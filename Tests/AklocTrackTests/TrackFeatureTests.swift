import AklocCore
import AklocFeature
import AklocJSON
import AklocPosix
import AklocProtocol
import AklocTestSupport
import AklocTrack
import Testing

/// `TrackFeature` against a fake host on virtual time: recording into the
/// state directory, the sync timer on the injected clock, who may read the
/// track, clearing it, and running without a journal.
@Suite struct TrackFeatureTests {
    let scratch = TrackScratch()

    /// A started feature over `scratch.path`.
    func started(_ settings: TrackSettings = TrackSettings(), logsDebug: Bool = false) throws -> (
        TrackFeature, FakeHost
    ) {
        let host = FakeHost(stateDirectory: scratch.path, logsDebug: logsDebug)
        let feature = try #require(host.sync { TrackFeature.make(settings, host: host) })
        try host.sync { try feature.start() }
        return (feature, host)
    }

    static func fix(_ index: Int) -> Location {
        // With the receiver's time: only such fixes are recorded.
        Location(
            latitude: 52.5, longitude: 13.4 + Double(index) * 0.001, horizontalAccuracy: 4, speed: 2,
            timestamp: FixTime(secondsSince1970: 1_800_000_000 + Int64(index)))
    }

    /// One throttled delivery a second after the last.
    static func record(_ index: Int, on host: FakeHost) {
        host.time.advance(by: 1)
        host.deliver(.didUpdateLocation(fix(index), afterTimeInterval: 1), to: host.added[0])
    }

    /// The points of a `track` reply, or its error.
    static func points(_ reply: Result<[UInt8], ProtocolError>?) throws -> Result<[TrackPoint], ProtocolError> {
        switch try #require(reply) {
        case .success(let line):
            let json = try JSONValue.parse(line.dropLast()).get()
            let page = try #require(json["result"].flatMap(TrackPage.init(json:)))
            return .success(page.points)
        case .failure(let error):
            return .failure(error)
        }
    }

    static func code(_ result: Result<[TrackPoint], ProtocolError>) -> ErrorCode? {
        if case .failure(let error) = result { error.code } else { nil }
    }

    @Test func recordsItsSubscribersEpochsIntoTheStateDirectory() throws {
        let (feature, host) = try started()
        try host.sync {
            let id = try #require(host.added.first)
            #expect(host.changes == [.added(id, .daemon, .afterSockets)])
            let start = try #require(host.startRequest(of: id))
            #expect(start.everyEpoch, "every epoch, so the recorder sees the real gaps")
            #expect(start.policy == ThrottlePolicy.Partial(TrackSettings().policy))
            #expect(host.messages(at: .notice).contains { $0.contains("recording the track in \(scratch.directory)") })

            for index in 0..<3 { Self.record(index, on: host) }
            let admin = host.connectClient(uid: 0, status: .notDetermined, isAdmin: true)
            let points = try Self.points(feature.answer(.track(TrackQuery()), id: .int(1), from: admin)).get()
            #expect(points.map(\.location.longitude) == (0..<3).map { Self.fix($0).longitude })
            #expect(points.map(\.segment) == [1, 1, 1])
            // Received at the virtual wall clock.
            #expect(points.last?.location.receivedAt == host.time.wallNow())
            #expect(feature.recorder?.recorded == 3)
        }
        let day = TrackStore.fileName(day: FakeHost().time.wallNow().day)
        #expect(directoryEntries(scratch.directory).contains(day), "\(directoryEntries(scratch.directory))")
    }

    @Test func aPauseInTheSinkStartsANewSegment() throws {
        let (feature, host) = try started()
        try host.sync {
            Self.record(0, on: host)
            host.deliver(.didGetNotification(.paused), to: host.added[0])
            host.time.advance(by: 1)
            // The first epoch after the pause, unthrottled, starts segment 2.
            host.deliver(.didUpdateLocation(Self.fix(1), afterTimeInterval: nil), to: host.added[0])
            let admin = host.connectClient(uid: 0, status: .authorizedAlways, isAdmin: true)
            let points = try Self.points(feature.answer(.track(TrackQuery()), id: nil, from: admin)).get()
            #expect(points.map(\.segment) == [1, 2])
        }
    }

    @Test func theSyncTimerFiresOnVirtualTime() throws {
        var settings = TrackSettings()
        settings.syncInterval = 5
        let (feature, host) = try started(settings)
        try host.sync {
            let recorder = try #require(feature.recorder)
            #expect(host.time.armedDeadlines.isEmpty, "nothing to sync before the first point")
            Self.record(0, on: host)
            let due = host.time.now().advanced(bySeconds: 5)
            #expect(recorder.syncDue == due)
            #expect(host.time.armedDeadlines == [due])
            // A second point within the interval does not push the sync back.
            Self.record(1, on: host)
            #expect(host.time.armedDeadlines == [due])
            host.time.advance(by: 3.9)
            #expect(recorder.syncDue == due, "not yet")
            host.time.advance(by: 0.2)
            #expect(recorder.syncDue == nil, "synced when due")
            #expect(host.time.armedDeadlines.isEmpty, "and disarmed until the next point")
            Self.record(2, on: host)
            #expect(host.time.armedDeadlines == [host.time.now().advanced(bySeconds: 5)])
            feature.stop()
            #expect(host.time.armedDeadlines.isEmpty, "stop cancels the timer")
            #expect(recorder.syncDue == nil, "and syncs what was pending")
        }
    }

    @Test func theTrackIsAnsweredOnlyToAlwaysClientsAndAdmins() throws {
        let (feature, host) = try started()
        try host.sync {
            Self.record(0, on: host)
            let cases: [(AuthorizationStatus, Bool, ErrorCode?)] = [
                (.authorizedAlways, false, nil),
                (.authorizedWhenInUse, false, .notAuthorized),
                (.denied, false, .notAuthorized),
                (.notDetermined, false, .notAuthorized),
                (.denied, true, nil),
            ]
            for (status, isAdmin, expected) in cases {
                let client = host.connectClient(uid: isAdmin ? 0 : 1000, status: status, isAdmin: isAdmin)
                let result = try Self.points(feature.answer(.track(TrackQuery()), id: .int(7), from: client))
                #expect(Self.code(result) == expected, "\(status) admin \(isAdmin)")
                if expected == nil { #expect((try? result.get())?.count == 1) }
            }
            // Told apart from a client the engine does not know.
            let gone = FeatureClient(id: 999, uid: 1000, gid: 1000, isAdmin: false, replyBudget: 1 << 20)
            #expect(
                Self.code(try Self.points(feature.answer(.track(TrackQuery()), id: nil, from: gone))) == .notAuthorized)
        }
    }

    @Test func clearTrackForgetsThePointsBeforeATimeOrAll() throws {
        let (feature, host) = try started()
        try host.sync {
            let admin = host.connectClient(uid: 0, status: .authorizedAlways, isAdmin: true)
            for index in 0..<4 { Self.record(index, on: host) }
            // Received 1 s apart: keep the last two.
            let cut = FixTime(secondsSince1970: host.time.wallNow().secondsSince1970 - 1)
            let cleared = try #require(feature.answer(.clearTrack(before: cut), id: .int(3), from: admin))
            #expect(try String(decoding: cleared.get(), as: UTF8.self).contains("\"id\":3"))
            var points = try Self.points(feature.answer(.track(TrackQuery()), id: nil, from: admin)).get()
            #expect(points.map(\.location.longitude) == [Self.fix(2).longitude, Self.fix(3).longitude])
            #expect(host.messages(at: .notice).contains { $0.contains("track: cleared points before") })

            _ = try #require(feature.answer(.clearTrack(before: nil), id: nil, from: admin)).get()
            points = try Self.points(feature.answer(.track(TrackQuery()), id: nil, from: admin)).get()
            #expect(points.isEmpty)
            // Recording goes on after a clear.
            Self.record(4, on: host)
            points = try Self.points(feature.answer(.track(TrackQuery()), id: nil, from: admin)).get()
            #expect(points.count == 1)
        }
    }

    @Test func otherOpsAreNotItsToAnswer() throws {
        let (feature, host) = try started()
        host.sync {
            let admin = host.connectClient(uid: 0, status: .authorizedAlways, isAdmin: true)
            #expect(feature.answer(.status, id: nil, from: admin) == nil)
            #expect(feature.answer(.places(.places), id: nil, from: admin) == nil)
        }
    }

    @Test func aJournalThatCannotBeOpenedFailsItsStartAndTheDaemonGoesOn() throws {
        // A file where the track's directory should be: ENOTDIR, even for root.
        writeFile(scratch.directory, "not a directory")
        let host = FakeHost(stateDirectory: scratch.path)
        let feature = try #require(host.sync { TrackFeature.make(TrackSettings(), host: host) })
        #expect(feature.failurePolicy == .logAndContinue)
        let error = host.start(feature)
        #expect(error?.code == .startFailed)
        #expect(
            error?.message.contains("track recorder: not recording a track") == true, "\(String(describing: error))")
        host.sync {
            #expect(host.added.isEmpty, "no subscriber without a journal")
            #expect(feature.recorder == nil)
            #expect(host.time.armedDeadlines.isEmpty)
            let admin = host.connectClient(uid: 0, status: .authorizedAlways, isAdmin: true)
            let result = try? Self.points(feature.answer(.track(TrackQuery()), id: nil, from: admin))
            #expect(result.flatMap(Self.code) == .unavailable)
            feature.stop()
        }
    }

    @Test(arguments: [false, true])
    func withoutAStateDirectoryOrWhenOffNothingIsRecordedAndTrackIsUnavailable(off: Bool) throws {
        var settings = TrackSettings()
        settings.enabled = !off
        let host = FakeHost(stateDirectory: off ? scratch.path : nil)
        let feature = try #require(host.sync { TrackFeature.make(settings, host: host) })
        try host.sync {
            try feature.start()
            #expect(host.added.isEmpty)
            #expect(feature.recorder == nil)
            let admin = host.connectClient(uid: 0, status: .authorizedAlways, isAdmin: true)
            let track = try Self.points(feature.answer(.track(TrackQuery()), id: nil, from: admin))
            #expect(Self.code(track) == .unavailable)
            if case .failure(let error) = track { #expect(error.message.contains("no track is recorded")) }
            let clear = try #require(feature.answer(.clearTrack(before: nil), id: nil, from: admin))
            #expect(Self.code(clear.map { _ in [TrackPoint]() }) == .unavailable)
            // Still refused to a client that may not read it, not told why.
            let user = host.connectClient(status: .authorizedWhenInUse)
            #expect(
                Self.code(try Self.points(feature.answer(.track(TrackQuery()), id: nil, from: user))) == .notAuthorized)
            feature.stop()
        }
        #expect(directoryEntries(scratch.path).isEmpty, "nothing written")
    }

    @Test func eachRecordedPointIsLoggedOnlyAtDebugLevel() throws {
        for debug in [false, true] {
            let scratch = TrackScratch()
            let host = FakeHost(stateDirectory: scratch.path, logsDebug: debug)
            let feature = try #require(host.sync { TrackFeature.make(TrackSettings(), host: host) })
            try host.sync {
                try feature.start()
                Self.record(0, on: host)
                Self.record(1, on: host)
                let lines = host.messages(at: .debug).filter { $0.hasPrefix("track recorded segment 1") }
                #expect(lines.count == (debug ? 2 : 0))
                feature.stop()
            }
        }
    }
}
