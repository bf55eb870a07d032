import AklocPosix
import Glibc
import Testing

@Suite struct FileReaderTests {
    @Test func readsAWholeFileUpToTheLimit() throws {
        let scratch = ScratchFiles()
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        scratch.write("data", bytes)
        #expect(try FileReader.read(scratch.file("data"), limit: 1 << 20) == bytes)
        #expect(try FileReader.read(scratch.file("data"), limit: 200_000) == bytes)
        scratch.write("empty", [])
        #expect(try FileReader.read(scratch.file("empty"), limit: 10) == [])
    }

    @Test func anOversizeFileIsCutAtLimitPlusOne() throws {
        let scratch = ScratchFiles()
        scratch.write("big", [UInt8](repeating: 1, count: 300_000))
        let read = try FileReader.read(scratch.file("big"), limit: 70_000)
        #expect(read.count == 70_001, "one byte past the limit says: too large")
    }

    @Test func anEndlessDeviceIsBounded() throws {
        #expect(try FileReader.read("/dev/zero", limit: 100).count == 101)
        #expect(try FileReader.read("/dev/null", limit: 100) == [])
    }

    @Test func notAFileIsATypedError() {
        let scratch = ScratchFiles()
        #expect(throws: Errno(rawValue: EISDIR)) { try FileReader.read(scratch.path, limit: 10) }
        #expect(throws: Errno.noSuchFile) { try FileReader.read(scratch.file("missing"), limit: 10) }
        mkfifo(scratch.file("fifo"), 0o600)
        // O_RDONLY on a FIFO would block without a writer; open it with one.
        let writer = open(scratch.file("fifo"), O_RDWR)
        defer { close(writer) }
        #expect(throws: Errno.invalidArgument) { try FileReader.read(scratch.file("fifo"), limit: 10) }
    }
}
