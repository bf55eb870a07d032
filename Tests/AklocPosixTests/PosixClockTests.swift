import AklocPosix
import Glibc
import Testing

@Suite struct PosixClockTests {
    @Test func theMonotonicClockNeverGoesBack() {
        var last = PosixClock.monotonic.nanoseconds()
        for _ in 0..<10_000 {
            let now = PosixClock.monotonic.nanoseconds()
            #expect(now >= last)
            last = now
        }
    }

    @Test func theWallClockAgreesWithTime() {
        let before = Int64(time(nil))
        let (seconds, nanoseconds) = PosixClock.realtime.now()
        let after = Int64(time(nil))
        #expect(seconds >= before && seconds <= after)
        #expect((0..<1_000_000_000).contains(nanoseconds))
    }

    @Test func environmentIsReadFromEnviron() {
        setenv("AKLOC_POSIX_TEST", "a=b", 1)
        defer { unsetenv("AKLOC_POSIX_TEST") }
        let environment = ProcessEnvironment.current()
        #expect(environment["AKLOC_POSIX_TEST"] == "a=b")
        #expect(environment["PATH"] == String(cString: getenv("PATH")))
    }
}
