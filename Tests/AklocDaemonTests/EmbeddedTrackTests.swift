import AklocCore
import AklocGPSD
import AklocTestSupport
import AklocTrack
import Foundation
import Testing

@testable import AklocDaemon

/// The recorder inside the whole daemon on virtual time: what it records,
/// when it syncs, how segments break, and who may read it.
@Suite struct EmbeddedTrackTests {
    private func daemon(_ directory: String) throws -> EmbeddedDaemon {
        var configuration = Configuration()
        configuration.authorization.defaultRule = .always
        return try EmbeddedDaemon(configuration: configuration, stateDirectory: directory)
    }

    private func track(_ embedded: EmbeddedDaemon, _ client: MemoryTransport, _ arguments: String = "")
        -> [String: Any]
    {
        embedded.send(#"{"id":"t","op":"track"\#(arguments)}"#, from: client)
        return embedded.receive(client).last { $0["id"] as? String == "t" } ?? [:]
    }

    private func points(_ reply: [String: Any]) -> [[String: Any]] {
        ((reply["result"] as? [String: Any])?["points"] as? [[String: Any]]) ?? []
    }

    @Test func recordsByItsPolicyBreaksSegmentsAndRecordsNothingWhilePaused() throws {
        let directory = TestSockets.temporaryDirectory()
        defer { _ = system("rm -rf '\(directory)'") }
        let embedded = try daemon(directory)
        defer { embedded.stop() }
        let admin = embedded.connect(uid: 0)
        _ = embedded.receive(admin)
        embedded.emit(.connected(name: "manual://test"))
        // Moving 1.1 m/s north, 1 Hz: min-interval 1 s, but 5 m apart at least.
        for second in 0..<20 {
            embedded.fix(latitude: 50 + Double(second) * 1e-5, speed: 1.1)
            embedded.advance(by: 1)
        }
        let moving = points(track(embedded, admin))
        // 0 s, then every 5th second (5.5 m > 5 m): 0, 5, 10, 15.
        #expect(moving.count == 4)
        #expect(Set(moving.compactMap { $0["segment"] as? Int }) == [1])
        // Synced within sync-interval on virtual time.
        #expect(
            embedded.onQueue { UncheckedBox($0.features.feature(TrackFeature.self)?.recorder?.store.unsynced) }.value
                == false)

        embedded.send(#"{"id":"p","op":"pause"}"#, from: admin)
        for second in 0..<30 {
            embedded.fix(latitude: 51 + Double(second) * 1e-3, speed: 100)
            embedded.advance(by: 1)
        }
        #expect(points(track(embedded, admin)).count == 4, "a paused daemon records nothing")
        embedded.send(#"{"id":"r","op":"resume"}"#, from: admin)
        embedded.fix(latitude: 52, speed: 1.1)
        embedded.advance(by: 1)
        // A source loss, then a gap of more than 60 s with no fix: two more segments.
        embedded.emit(.disconnected(reason: "test"))
        embedded.emit(.connected(name: "manual://test"))
        embedded.fix(latitude: 52.001, speed: 1.1)
        embedded.advance(by: 61.5)
        embedded.fix(latitude: 52.002, speed: 1.1)
        // After the reconnect the receiver's shape is learned anew: with no
        // next epoch to end it, this one goes out at the epoch bound (1.5 s).
        embedded.advance(by: 2)
        let all = points(track(embedded, admin))
        #expect(all.compactMap { $0["segment"] as? Int } == [1, 1, 1, 1, 2, 3, 4])
        #expect(all.allSatisfy { $0["timestamp"] is String && $0["receivedAt"] is String && $0["speed"] is Double })

        // since/until/limit/after go through; since after until names since.
        let first = track(embedded, admin, #","limit":3"#)
        let next = try #require((first["result"] as? [String: Any])?["next"] as? String)
        #expect(points(first).count == 3)
        #expect(points(track(embedded, admin, #","after":"\#(next)""#)).count == 4)
        let bad = track(embedded, admin, #","since":"9999-01-01""#)
        #expect((bad["error"] as? [String: Any])?["code"] as? String == "badRequest")
        #expect(((bad["error"] as? [String: Any])?["message"] as? String)?.contains("\"since\"") == true)
    }

    @Test func onlyAlwaysClientsAndAdminsReadItAndOnlyAdminsClearIt() throws {
        let directory = TestSockets.temporaryDirectory()
        defer { _ = system("rm -rf '\(directory)'") }
        let embedded = try daemon(directory)
        defer { embedded.stop() }
        let admin = embedded.connect(uid: 0)
        embedded.emit(.connected(name: "manual://test"))
        // Epochs wait while their shape is learned: a few fixes, so some are recorded.
        for second in 0..<4 {
            embedded.fix(latitude: 50 + Double(second) * 1e-4, speed: 1)
            embedded.advance(by: 1)
        }
        _ = embedded.receive(admin)
        let recorded = points(track(embedded, admin)).count
        #expect(recorded > 0)

        let undecided = embedded.connect(uid: 4001)
        _ = embedded.receive(undecided)
        let refused = track(embedded, undecided)
        #expect((refused["error"] as? [String: Any])?["code"] as? String == "notAuthorized")
        embedded.send(#"{"op":"requestAuthorization","type":"whenInUse"}"#, from: undecided)
        #expect((track(embedded, undecided)["error"] as? [String: Any])?["code"] as? String == "notAuthorized")

        let always = embedded.connect(uid: 4002)
        embedded.send(#"{"op":"requestAuthorization","type":"always"}"#, from: always)
        _ = embedded.receive(always)
        let allowed = track(embedded, always)
        #expect(points(allowed).count == recorded, "\(allowed)")
        embedded.send(#"{"id":"c","op":"clearTrack"}"#, from: always)
        let forbidden = embedded.receive(always).last { $0["id"] as? String == "c" }
        #expect((forbidden?["error"] as? [String: Any])?["code"] as? String == "forbidden")

        embedded.send(#"{"id":"c","op":"clearTrack"}"#, from: admin)
        let cleared = embedded.receive(admin).last { $0["id"] as? String == "c" }
        #expect(cleared?["ok"] as? Bool == true)
        #expect(points(track(embedded, always)).isEmpty)
    }
}
