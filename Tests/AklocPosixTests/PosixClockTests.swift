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

    // time(2) reads the kernel's coarse clock, which can trail CLOCK_REALTIME by a tick across a
    // second boundary; gettimeofday(2) reads the same precise clock by another call.
    @Test func theWallClockAgreesWithGettimeofday() {
        var tv = timeval()
        gettimeofday(&tv, nil)
        let before = Int64(tv.tv_sec)
        let (seconds, nanoseconds) = PosixClock.realtime.now()
        gettimeofday(&tv, nil)
        let after = Int64(tv.tv_sec)
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
