import AklocPosix
import AklocTestSupport
import Glibc
import Testing

@testable import AklocPosix

@Suite struct SyscallTests {
    @Test func errnoHasNameAndMessage() {
        let error = Errno(rawValue: ENOENT)
        #expect(error.name == "ENOENT")
        #expect(error.message == "No such file or directory")
        #expect(error.description == "ENOENT: No such file or directory")
        #expect(Errno(rawValue: 9999).name == "E9999")
    }

    @Test func failuresBecomeTypedErrors() {
        #expect(throws: Errno.noSuchFile) {
            try Syscall.retryingOnEINTR { open("/nonexistent/akloc", O_RDONLY) }
        }
        #expect(throws: Errno(rawValue: EBADF)) {
            try Syscall.retryingNegativeErrnoOnEINTR { -EBADF }
        }
    }

    @Test func retriesWhileInterrupted() throws {
        var calls = 0
        let result = try Syscall.retryingOnEINTR { () -> Int32 in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == 7)
        #expect(calls == 3)

        var negativeCalls = 0
        let negative = try Syscall.retryingNegativeErrnoOnEINTR({
            negativeCalls += 1
            return negativeCalls < 2 ? -EINTR : 0
        })
        #expect(negative == 0)
        #expect(negativeCalls == 2)
    }

    @Test func writeAllWritesEverything() throws {
        let (readEnd, writeEnd) = TestSockets.pipe()
        defer {
            close(readEnd)
            close(writeEnd)
        }
        let text = String(repeating: "akloc ", count: 1000)
        try Array(text.utf8).withUnsafeBytes { try Syscall.writeAll(writeEnd, $0) }
        #expect(TestSockets.drain(readEnd) == text)
    }
}
