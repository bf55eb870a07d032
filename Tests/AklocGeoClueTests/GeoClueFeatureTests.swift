import AklocCore
import AklocFeature
import AklocPosix
import AklocTestSupport
import Testing

@testable import AklocGeoClue

/// `GeoClueFeature` against a fake host, as far as it goes without a system
/// bus: its start connects to one, so the clients it serves (the host's
/// authorization on `Start`, a subscriber per started client, its
/// thresholds as the policy) are tested with GeoClue's own client on a
/// private bus (Tests/IntegrationTests/GeoClueTests.swift).
@Suite struct GeoClueFeatureTests {
    let host = FakeHost()

    /// Made from a section that turns it on; not started (that needs the bus).
    func made() throws -> GeoClueFeature {
        var settings = GeoClueSettings()
        settings.enabled = true
        return try #require(host.sync { GeoClueFeature.make(settings, host: host) })
    }

    static func request(client: UInt32, uid: UInt32) -> GeoClueService.StartRequest {
        GeoClueService.StartRequest(
            client: client, uid: uid, gid: uid, desktopID: "org.example.Maps", policy: ThrottlePolicy())
    }

    @Test func madeOnlyWhenTheSectionTurnsItOn() {
        host.sync {
            #expect(GeoClueFeature.make(GeoClueSettings(), host: host) == nil)
            var settings = GeoClueSettings()
            settings.enabled = true
            let feature = GeoClueFeature.make(settings, host: host)
            #expect(feature?.startedClients == 0)
            #expect(feature?.ownsName == false)
            #expect(feature?.failurePolicy == .abortStart)
            #expect(host.changes.isEmpty, "nothing subscribed before a client starts")
        }
    }

    @Test func aClientStartingBeforeTheFeatureRunsOrAfterItStoppedIsDenied() throws {
        let feature = try made()
        host.sync {
            // Even a uid the rules allow: the service is not running.
            host.grants[1000] = .authorizedAlways
            let decision = feature.service.handlers.start(Self.request(client: 1, uid: 1000))
            #expect(decision == .denied("aklocd is stopping"))
            #expect(host.changes.isEmpty)
            #expect(feature.startedClients == 0)
            // A stop or a new policy for a client it never started changes nothing.
            feature.service.handlers.stop(1)
            feature.service.handlers.policyChanged(1, ThrottlePolicy())
            #expect(host.inputs.isEmpty)
            feature.stop()
            #expect(feature.service.handlers.start(Self.request(client: 2, uid: 1000)) == .denied("aklocd is stopping"))
        }
    }

    @Test func aReloadWaitsForARestart() throws {
        let feature = try made()
        host.sync {
            feature.apply(GeoClueSettings())
            #expect(host.messages(at: .notice).contains { $0.contains("[geoclue] applies at the next restart") })
        }
    }
}
