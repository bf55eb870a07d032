import AklocTestSupport
import Dispatch
import Glibc
import Synchronization
import Testing

@testable import AklocSystemd

/// Collects change batches delivered on a queue.
private final class ChangeLog: Sendable {
    private let changes = Mutex<[[SessionChange]]>([])
    func append(_ batch: [SessionChange]) { changes.withLock { $0.append(batch) } }
    var batches: [[SessionChange]] { changes.withLock { $0 } }

    /// Waits (bounded) until `count` batches arrived.
    func wait(for count: Int, timeout: Double = 5) -> [[SessionChange]] {
        let deadline = DispatchTime.now() + timeout
        while batches.count < count && DispatchTime.now() < deadline { usleep(10_000) }
        return batches
    }
}

@Suite struct FakeSessionMonitorTests {
    @Test func reportsChangesForWatchedUIDsOnTheQueue() throws {
        let queue = DispatchQueue(label: "test.session")
        let monitor = FakeSessionMonitor()
        let log = ChangeLog()
        try monitor.start(on: queue) { batch in
            dispatchPrecondition(condition: .onQueue(queue))
            log.append(batch)
        }
        #expect(monitor.isStarted)
        #expect(monitor.isActive(uid: 1000))
        monitor.set(uid: 1000, active: false)
        monitor.set(uid: 1000, active: false)  // not a change
        monitor.set(uid: 2000, active: false)  // never asked about
        monitor.set(uid: 1000, active: true)
        queue.sync {}
        #expect(log.batches == [[SessionChange(uid: 1000, active: false)], [SessionChange(uid: 1000, active: true)]])
        #expect(!monitor.isActive(uid: 2000))
        #expect(monitor.watchedUIDs == [1000, 2000])
        monitor.forget(uid: 1000)
        monitor.set(uid: 1000, active: false)
        monitor.stop()
        monitor.set(uid: 2000, active: true)
        queue.sync {}
        #expect(log.batches.count == 2)
        #expect(!monitor.isStarted)
    }

    @Test func withoutSessionTrackingEveryoneIsActive() throws {
        let monitor = FakeSessionMonitor(tracksSessions: false, defaultActive: false)
        #expect(!monitor.tracksSessions)
        monitor.set(uid: 1000, active: false)
        #expect(monitor.isActive(uid: 1000))
    }

    @Test func defaultActiveAnswersUnsetUIDs() {
        #expect(!FakeSessionMonitor(defaultActive: false).isActive(uid: 5))
    }
}

@Suite(.serialized) struct LogindSessionMonitorTests {
    private func runtimeDirectory(users: Bool, system: Bool) -> String {
        let directory = TestSockets.temporaryDirectory()
        if users { mkdir(directory + "/users", 0o755) }
        if system { mkdir(directory + "/system", 0o755) }
        return directory
    }

    private func remove(_ directory: String) {
        rmdir(directory + "/users")
        rmdir(directory + "/system")
        rmdir(directory)
    }

    @Test func noLogindMeansEveryoneActive() throws {
        for (users, system) in [(false, false), (true, false), (false, true)] {
            let directory = runtimeDirectory(users: users, system: system)
            defer { remove(directory) }
            let monitor = LogindSessionMonitor(runtimeDirectory: directory)
            #expect(!monitor.tracksSessions, "users/: \(users), system/: \(system)")
            #expect(monitor.isActive(uid: 0))
            #expect(monitor.isActive(uid: 1000))
            let queue = DispatchQueue(label: "test.logind")
            try monitor.start(on: queue) { _ in Issue.record("no change without logind") }
            monitor.stop()
        }
    }

    /// This container has an empty /run/systemd/users/ but no systemd as PID 1.
    @Test func thisMachineIsDetected() {
        let booted = access("/run/systemd/system", F_OK) == 0 && access("/run/systemd/users", F_OK) == 0
        #expect(LogindSessionMonitor().tracksSessions == booted)
    }

    /// With logind "present", answers come from sd_uid_get_state: a uid
    /// without a record in /run/systemd/users is offline, so not active.
    @Test func logindPresentAsksSdLogin() throws {
        try #require(access("/run/systemd/users/4000000123", F_OK) != 0)
        let directory = runtimeDirectory(users: true, system: true)
        defer { remove(directory) }
        let monitor = LogindSessionMonitor(runtimeDirectory: directory)
        #expect(monitor.tracksSessions)
        #expect(!monitor.isActive(uid: 4_000_000_123))
        #expect(!LogindSessionMonitor.queryActive(uid: 4_000_000_123))
    }

    /// Plays logind by writing its per-uid record, which is exactly what
    /// sd_uid_get_state(3) and the sd_login_monitor inotify watch read.
    /// Needs root and logind's directory without a running logind (as in
    /// this container); uses a uid no one has.
    @Test(
        .enabled(
            if: getuid() == 0 && access("/run/systemd/users", W_OK) == 0 && !LogindSessionMonitor().tracksSessions,
            "needs root and /run/systemd/users/ without a running logind"))
    func reportsStateChangesFromLogindRecords() throws {
        let users = "/run/systemd/users"
        let uid: UInt32 = 4_000_000_124
        let record = "\(users)/\(uid)"
        try #require(access(record, F_OK) != 0)
        func writeRecord(_ state: String) {
            // logind replaces its records by rename, and so does this.
            let temporary = "\(users)/.#akloc-test-\(uid)"
            let file = fopen(temporary, "w")!
            fputs("# This is private data. Do not parse.\nNAME=akloc-test\nSTATE=\(state)\n", file)
            fclose(file)
            rename(temporary, record)
        }
        defer { unlink(record) }
        writeRecord("online")

        let directory = runtimeDirectory(users: true, system: true)
        defer { remove(directory) }
        let monitor = LogindSessionMonitor(runtimeDirectory: directory)
        let queue = DispatchQueue(label: "test.logind")
        let log = ChangeLog()
        try monitor.start(on: queue) { batch in
            dispatchPrecondition(condition: .onQueue(queue))
            log.append(batch)
        }
        defer { monitor.stop() }
        #expect(!monitor.isActive(uid: uid))
        writeRecord("active")
        #expect(log.wait(for: 1).first == [SessionChange(uid: uid, active: true)])
        #expect(monitor.isActive(uid: uid))
        writeRecord("closing")
        #expect(log.wait(for: 2).last == [SessionChange(uid: uid, active: false)])
        monitor.forget(uid: uid)
        writeRecord("active")
        usleep(200_000)
        queue.sync {}
        #expect(log.batches.count == 2, "a forgotten uid is not reported")
    }
}
