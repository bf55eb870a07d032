import AklocPosix
import AklocTestSupport
import Glibc
import Testing

@Suite struct AtomicFileTests {
    @Test func replacesContentKeepingTheOldMode() throws {
        let scratch = ScratchFiles()
        let path = scratch.file("state.json")
        try AtomicFile.write(Array("first".utf8), to: path, mode: 0o600)
        #expect(TestFiles.contents(path) == Array("first".utf8))
        #expect(TestFiles.mode(path) == 0o600)
        chmod(path, 0o640)
        try AtomicFile.write(Array("second".utf8), to: path, mode: 0o600)
        #expect(TestFiles.contents(path) == Array("second".utf8))
        #expect(TestFiles.mode(path) == 0o640, "an administrator's chosen mode stays")
        #expect(TestFiles.entries(scratch.path) == ["state.json"], "no temp file left")
    }

    @Test func aMissingDirectoryIsAnErrorAndCreatesNothing() {
        let scratch = ScratchFiles()
        #expect(throws: Errno.noSuchFile) {
            try AtomicFile.write([1, 2, 3], to: scratch.file("missing/state.json"), mode: 0o600)
        }
        #expect(TestFiles.entries(scratch.path).isEmpty)
    }

    /// On a really full or read-only filesystem: an error, the old content
    /// untouched, no temp file left behind.
    @Test(.enabled(if: TestMount.shouldRun, "needs root to mount a tmpfs"), arguments: TestMount.Fault.allCases)
    func aFailedWriteLeavesTheOldFile(fault: TestMount.Fault) throws {
        let mount = try TestMount(sizeKiB: 64)
        defer { mount.unmount() }
        let path = mount.path + "/state.json"
        let old = Array("{\"paused\":false}\n".utf8)
        try AtomicFile.write(old, to: path, mode: 0o600)
        try mount.inject(fault)
        let big = [UInt8](repeating: 0x61, count: 16 << 10)
        do {
            try AtomicFile.write(big, to: path, mode: 0o600)
            Issue.record("a write on a \(fault) filesystem succeeded")
        } catch {
            #expect(error.name == fault.errnoName, "\(error)")
        }
        #expect(TestFiles.contents(path) == old)
        #expect(TestFiles.entries(mount.path).filter { $0.contains(".tmp-") }.isEmpty, "temp file removed")
        try mount.repair(fault)
        try AtomicFile.write(big, to: path, mode: 0o600)
        #expect(TestFiles.contents(path) == big)
    }
}
