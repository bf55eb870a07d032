import AklocTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The process helpers other integration tests reuse.
@Suite struct TestProcessTests {
    @Test func capturesOutputAndExitCode() throws {
        let process = try TestProcess("sh", ["-c", "echo out; echo err >&2; exit 3"])
        #expect(process.waitForExit(timeout: 10) == 3)
        #expect(process.stdout() == "out\n")
        #expect(process.stderr() == "err\n")
    }

    @Test func environmentIsPassed() throws {
        let process = try TestProcess(
            "sh", ["-c", "printf %s \"$AKLOC_TEST_VALUE\""], environment: ["AKLOC_TEST_VALUE": "42"])
        #expect(process.waitForExit(timeout: 10) == 0)
        #expect(process.stdout() == "42")
    }

    @Test func killTakesTheWholeProcessGroup() throws {
        let process = try TestProcess("sh", ["-c", "sleep 300 & echo $!; wait"])
        var child: pid_t?
        let deadline = Date().addingTimeInterval(10)
        while child == nil, Date() < deadline {
            child = pid_t(process.stdout().trimmingCharacters(in: .whitespacesAndNewlines))
            if child == nil { usleep(10_000) }
        }
        guard let child else {
            Issue.record("no child pid")
            return
        }
        #expect(TestProcess.children(of: process.pid).contains(child))
        #expect(process.waitForExit(timeout: 0.1) == nil)
        process.kill()
        #expect(!process.isRunning)
        #expect(process.exitCode == 128 + SIGKILL)
        let gone = Date().addingTimeInterval(10)
        while !TestProcess.isDead(child), Date() < gone { usleep(10_000) }
        #expect(TestProcess.isDead(child))
    }

    @Test func missingExecutableThrows() {
        #expect(throws: TestProcess.LaunchError.self) { try TestProcess("akloc-no-such-tool", []) }
    }

    @Test func freePortIsFreeAndNotListening() {
        let port = FreePort.loopbackTCP()
        #expect(port > 0)
        #expect(!FreePort.isListening(port))
    }
}
