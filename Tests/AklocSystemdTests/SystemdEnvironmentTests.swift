import AklocCore
import AklocPosix
import AklocTestSupport
import Glibc
import Testing

@testable import AklocSystemd

/// Everything that reads or sets process-wide environment variables lives in
/// this one serialized suite: Swift Testing runs tests in parallel in one process.
@Suite(.serialized)
struct SystemdEnvironmentTests {
    // MARK: SystemdNotifier

    /// A bound datagram socket standing in for systemd's notify socket.
    private func withNotifySocket(extra: [String: String?] = [:], _ body: (Int32) throws -> Void) rethrows {
        let directory = TestSockets.temporaryDirectory()
        let path = directory + "/notify"
        let fd = TestSockets.unixSocket(type: Int32(SOCK_DGRAM.rawValue), path: path)
        defer {
            close(fd)
            unlink(path)
            rmdir(directory)
        }
        var environment = extra
        environment["NOTIFY_SOCKET"] = path
        try withEnvironment(environment) { try body(fd) }
    }

    @Test func notifierSendsEachMessage() throws {
        try withNotifySocket { fd in
            let notifier = SystemdNotifier()
            #expect(notifier.isEnabled)
            try notifier.ready()
            #expect(TestSockets.receive(fd) == "READY=1")
            try notifier.status("3D fix, 4 clients")
            #expect(TestSockets.receive(fd) == "STATUS=3D fix, 4 clients")
            try notifier.stopping()
            #expect(TestSockets.receive(fd) == "STOPPING=1")
            try notifier.watchdog()
            #expect(TestSockets.receive(fd) == "WATCHDOG=1")
        }
    }

    @Test func statusCannotInjectAssignments() throws {
        try withNotifySocket { fd in
            try SystemdNotifier().status("no fix\nREADY=1")
            #expect(TestSockets.receive(fd) == "STATUS=no fix READY=1")
        }
    }

    @Test func reloadingCarriesMonotonicTimestamp() throws {
        try withNotifySocket { fd in
            let before = SystemdNotifier.monotonicMicroseconds()
            try SystemdNotifier().reloading()
            let after = SystemdNotifier.monotonicMicroseconds()
            let message = try #require(TestSockets.receive(fd))
            let lines = message.split(separator: "\n")
            #expect(lines.count == 2)
            #expect(lines.first == "RELOADING=1")
            let stamp = try #require(lines.last.flatMap { UInt64($0.dropFirst("MONOTONIC_USEC=".count)) })
            #expect(lines.last?.hasPrefix("MONOTONIC_USEC=") == true)
            #expect(stamp >= before && stamp <= after)
        }
    }

    @Test func notifierIsSilentWithoutNotifySocket() throws {
        try withEnvironment(["NOTIFY_SOCKET": nil, "WATCHDOG_USEC": nil, "WATCHDOG_PID": nil]) {
            let notifier = SystemdNotifier()
            #expect(!notifier.isEnabled)
            try notifier.ready()
            try notifier.status("x")
            try notifier.reloading()
            try notifier.watchdog()
            try notifier.stopping()
            #expect(notifier.watchdogInterval == nil)
        }
    }

    @Test func notifierReportsUnreachableSocket() {
        withEnvironment(["NOTIFY_SOCKET": "/nonexistent/akloc-notify"]) {
            #expect(throws: Errno.self) { try SystemdNotifier().ready() }
        }
    }

    @Test func watchdogIntervalIsHalfOfWatchdogUsec() {
        withEnvironment(["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": String(getpid())]) {
            #expect(SystemdNotifier().watchdogInterval == .seconds(15))
        }
        withEnvironment(["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": String(getpid() + 1)]) {
            #expect(SystemdNotifier().watchdogInterval == nil, "the watchdog belongs to another process")
        }
        withEnvironment(["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": nil]) {
            #expect(SystemdNotifier().watchdogInterval == .seconds(15))
            #expect(getenv("WATCHDOG_USEC") != nil, "the environment is left alone")
        }
    }

    // MARK: ListenFDs

    @Test func notActivatedMeansNoDescriptors() throws {
        try withEnvironment(["LISTEN_PID": nil, "LISTEN_FDS": nil]) { () throws in
            #expect(try ListenFDs.activated().isEmpty)
            #expect(try ListenFDs.unixStreamListener() == nil)
        }
        try withEnvironment(["LISTEN_PID": String(getpid() + 1), "LISTEN_FDS": "1"]) { () throws in
            #expect(try ListenFDs.activated().isEmpty, "descriptors meant for another process")
        }
    }

    @Test func malformedActivationEnvironmentIsAnError() {
        withEnvironment(["LISTEN_PID": String(getpid()), "LISTEN_FDS": "many"]) {
            #expect(throws: ListenFDsError.self) { try ListenFDs.activated() }
        }
    }
}

extension SystemdEnvironmentTests {
    @Test func standardLoggerUsesJournalOnlyWhenStderrIsTheJournalStream() {
        var info = stat()
        fstat(STDERR_FILENO, &info)
        let journald = access("/run/systemd/journal/socket", W_OK) == 0
        withEnvironment(["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"]) {
            #expect(Logger.standard(minimumLevel: .debug).isJournal == journald)
            #expect(Logger.standard(minimumLevel: .debug).minimumLevel == .debug)
            #expect(Logger.standard().minimumLevel == .info)
        }
        withEnvironment(["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino &+ 1)"]) {
            #expect(Logger.standard().destination == .stream(STDERR_FILENO))
        }
        withEnvironment(["JOURNAL_STREAM": nil]) {
            #expect(!Logger.standard().isJournal)
        }
    }
}

extension SystemdEnvironmentTests {
    /// Stands in for journald at its fixed socket path, which libsystemd does
    /// not let callers change. Runs only as root on a machine without
    /// journald (this container), and removes what it created. Serialized
    /// with the test that checks for that socket.
    @Test(
        .enabled(
            if: getuid() == 0 && access("/run/systemd/journal/socket", F_OK) != 0,
            "needs root and no running journald"))
    func recordsReachJournaldWithStructuredFields() throws {
        let directory = "/run/systemd/journal"
        let path = directory + "/socket"
        let createdDirectory = mkdir(directory, 0o755) == 0
        let journald = TestSockets.unixSocket(type: Int32(SOCK_DGRAM.rawValue), path: path)
        defer {
            close(journald)
            unlink(path)
            if createdDirectory { rmdir(directory) }
        }
        let (readEnd, writeEnd) = TestSockets.pipe()
        defer {
            close(readEnd)
            close(writeEnd)
        }
        let logger = Logger(minimumLevel: .info, destination: .journal(fallback: writeEnd))
        logger.warning("client dropped", ["AKLOC_CLIENT_UID": "1000", "akloc-source": "gpsd://127.0.0.1:2947"])
        let datagram = try #require(TestSockets.receive(journald))
        let fields = datagram.split(separator: "\n").map(String.init)
        #expect(fields.contains("MESSAGE=client dropped"))
        #expect(fields.contains("PRIORITY=4"))
        #expect(fields.contains("SYSLOG_IDENTIFIER=aklocd"))
        #expect(fields.contains("AKLOC_CLIENT_UID=1000"))
        #expect(fields.contains("AKLOC_SOURCE=gpsd://127.0.0.1:2947"))
        #expect(!fields.contains { $0.hasPrefix("CODE_FILE=") }, "no location of the shim header")

        logger.info("two\nlines")
        let binary = try #require(TestSockets.receive(journald))
        // Values with newlines use journald's length-prefixed field format.
        #expect(binary.contains("MESSAGE\n"))
        #expect(binary.contains("two\nlines"))
        logger.debug("filtered")
        #expect(TestSockets.receive(journald, timeoutMilliseconds: 50) == nil)
        #expect(TestSockets.drain(readEnd).isEmpty, "nothing fell back to the stream")
    }
}
