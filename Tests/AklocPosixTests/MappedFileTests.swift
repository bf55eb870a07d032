import AklocPosix
import Glibc
import Testing

@Suite struct MappedFileTests {
    @Test func mapsTheWholeFileReadOnly() throws {
        let scratch = ScratchFiles()
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 * 13) }
        scratch.write("data.bin", bytes)
        let mapped = try MappedFile(path: scratch.file("data.bin"))
        #expect(mapped.bytes.count == bytes.count)
        #expect(Array(mapped.bytes) == bytes)
        #expect(mapped.path == scratch.file("data.bin"))
        scratch.write("empty", [])
        #expect(try MappedFile(path: scratch.file("empty")).bytes.isEmpty)
    }

    /// Random access only changes how the kernel reads the pages in (what it
    /// makes resident is measured by `make bench`, not asserted here).
    @Test func randomAccessReadsTheSameBytes() throws {
        let scratch = ScratchFiles()
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        scratch.write("data.bin", bytes)
        let mapped = try MappedFile(path: scratch.file("data.bin"), access: .random)
        #expect(Array(mapped.bytes) == bytes)
        #expect(mapped.bytes[299_999] == bytes[299_999])
    }

    /// The mapping outlives the name: the data a lookup reads cannot change
    /// under it when the file is replaced (an upgrade renames new data in).
    @Test func survivesTheFileBeingReplaced() throws {
        let scratch = ScratchFiles()
        scratch.write("data.bin", [1, 2, 3, 4])
        let mapped = try MappedFile(path: scratch.file("data.bin"))
        scratch.write("new.bin", [9, 9])
        #expect(rename(scratch.file("new.bin"), scratch.file("data.bin")) == 0)
        #expect(Array(mapped.bytes) == [1, 2, 3, 4])
    }

    @Test func refusalsAreTypedErrors() {
        let scratch = ScratchFiles()
        #expect(throws: Errno.noSuchFile) { try MappedFile(path: scratch.file("missing")) }
        #expect(throws: Errno(rawValue: EISDIR)) { try MappedFile(path: scratch.path) }
        #expect(throws: Errno.invalidArgument) { try MappedFile(path: "/dev/zero") }
        scratch.write("big", [UInt8](repeating: 0, count: 4097))
        #expect(throws: Errno(rawValue: EFBIG)) { try MappedFile(path: scratch.file("big"), limit: 4096) }
    }
}
