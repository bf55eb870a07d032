import AklocCore
import Testing

@testable import AklocDaemon

@Suite struct LocationSaveScheduleTests {
    private func at(_ seconds: Double) -> Instant { .seconds(seconds) }

    @Test func firstFixOfTheRunIsSavedAtOnce() {
        var schedule = LocationSaveSchedule(interval: 30)
        #expect(schedule.fixArrived(at: at(100)) == at(100))
        #expect(schedule.isPending)
    }

    @Test func fixesWhileASaveIsPendingArmNothingMore() {
        var schedule = LocationSaveSchedule(interval: 30)
        _ = schedule.fixArrived(at: at(100))
        #expect(schedule.fixArrived(at: at(100.5)) == nil)
        #expect(schedule.fixArrived(at: at(101)) == nil)
    }

    @Test func laterFixesAreSavedAtMostOncePerInterval() {
        var schedule = LocationSaveSchedule(interval: 30)
        _ = schedule.fixArrived(at: at(100))
        schedule.saved(at: at(100.01))
        #expect(!schedule.isPending)
        // One second later: due 30 s after the last save, not now.
        #expect(schedule.fixArrived(at: at(101)) == at(130.01))
        #expect(schedule.fixArrived(at: at(102)) == nil)
        schedule.saved(at: at(130.02))
        // A fix long after the last save is saved at once.
        #expect(schedule.fixArrived(at: at(500)) == at(500))
    }

    @Test func anotherSaveCoversThePendingOne() {
        var schedule = LocationSaveSchedule(interval: 30)
        _ = schedule.fixArrived(at: at(100))
        schedule.saved(at: at(100))
        _ = schedule.fixArrived(at: at(110))
        // A pause writes the state (last location included) meanwhile.
        schedule.saved(at: at(115))
        #expect(!schedule.isPending)
        #expect(schedule.fixArrived(at: at(116)) == at(145))
    }
}
