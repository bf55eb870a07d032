import AklocCore
import AklocProtocol
import Testing

@testable import AklocDaemon

@Suite struct StatusReportTests {
    private func report(
        _ snapshot: Engine.Snapshot, now: Double = 100, wallNow: Int64 = 1_000_000, features: Int = 0
    ) -> StatusReport {
        StatusReport(
            snapshot: snapshot, counters: ShellCounters(), now: .seconds(now),
            wallNow: FixTime(secondsSince1970: wallNow), startedAt: .seconds(40), sourceName: "gpsd://test",
            internalSubscribers: features)
    }

    @Test func featuresSubscribersAreNotCountedAsClients() {
        let snapshot = Engine.Snapshot(state: .searching, clients: 5, updating: 4)
        let status = report(snapshot, features: 2).status(showingFix: true)
        #expect(status.clients.connected == 3)
        #expect(status.clients.updating == 2)
        #expect(status.uptimeSeconds == 60)
        #expect(report(snapshot, features: 2).serviceLine == "searching for a fix, 3 clients")
        #expect(report(Engine.Snapshot(state: .paused, clients: 2), features: 1).serviceLine == "paused, 1 client")
    }

    @Test func aFixIsShownOnlyToAClientThatMayHaveIt() {
        let fix = Location(latitude: 52, longitude: 5, mode: .threeD)
        let snapshot = Engine.Snapshot(state: .running, lastFix: fix, lastFixAt: .seconds(97.5), clients: 1)
        #expect(report(snapshot).status(showingFix: true).fix?.ageSeconds == 2.5)
        #expect(report(snapshot).status(showingFix: false).fix == nil)
        #expect(report(snapshot).serviceLine == "3D fix, 1 client")
    }

    @Test func aRestoredFixAgesByTheWallClock() {
        // Restored from the state file: no receipt in this run's monotonic time.
        let fix = Location(latitude: 52, longitude: 5, receivedAt: FixTime(secondsSince1970: 999_990))
        let snapshot = Engine.Snapshot(state: .searching, lastFix: fix)
        #expect(report(snapshot).age(of: fix) == 10)
    }
}
