import AklocPosix
import AklocTestSupport
import Glibc
import Testing

private func text(_ records: [[UInt8]]) -> [String] { records.map { String(decoding: $0, as: UTF8.self) } }

@Suite struct JournalTests {
    @Test func recordsSurviveReopening() throws {
        let scratch = ScratchFiles()
        let journal = Journal(path: scratch.file("j"))
        #expect(try journal.open(limit: 1 << 20) == Journal.Contents())
        try journal.append(Array("one".utf8))
        try journal.append([Array("two".utf8), [], Array("{\"x\":\"é\"}".utf8)])
        try journal.sync()
        #expect(TestFiles.mode(scratch.file("j")) == 0o600)
        let reopened = try Journal(path: scratch.file("j")).open(limit: 1 << 20)
        #expect(text(reopened.records) == ["one", "two", "", "{\"x\":\"é\"}"])
        #expect(reopened.tornBytes == 0 && reopened.corruptRecords == 0)
    }

    @Test func theLineFormatIsChecksumSpaceRecord() {
        // CRC-32C("123456789") is e3069283, the standard check value.
        #expect(Journal.encode(Array("123456789".utf8)) == Array("e3069283 123456789\n".utf8))
        #expect(CRC32C.checksum([UInt8]()) == 0)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
    }

    @Test func everyTruncationLosesOnlyTheTornRecord() {
        let records = ["first", "second record", "third"].map { Array($0.utf8) }
        let bytes = records.flatMap(Journal.encode)
        let ends = records.map { Journal.encode($0).count }.reduce(into: [0]) { $0.append($0.last! + $1) }
        for length in 0...bytes.count {
            let contents = Journal.decode(Array(bytes[0..<length]))
            let complete = ends.lastIndex { $0 <= length }!
            #expect(contents.records == Array(records[0..<complete]), "cut at \(length)")
            #expect(contents.tornBytes == length - ends[complete])
            #expect(contents.corruptRecords == 0)
        }
    }

    @Test func aFlippedBitIsNeverTakenForData() {
        let line = Journal.encode(Array("{\"seq\":1}".utf8))
        for index in line.indices.dropLast() {
            for bit in 0..<8 {
                var damaged = line
                damaged[index] ^= 1 << bit
                guard damaged[index] != 0x0A else { continue }
                let contents = Journal.decode(damaged)
                #expect(contents.records.isEmpty, "byte \(index) bit \(bit) passed")
                #expect(contents.corruptRecords == 1)
            }
        }
    }

    @Test func garbageLinesAreCountedAndTheRestKept() {
        let good = Journal.encode(Array("kept".utf8))
        let bytes = Array("not a record\n\nzzzzzzzz x\ne3069283 12345678\n".utf8) + good + Array("e3069283".utf8)
        let contents = Journal.decode(bytes)
        #expect(text(contents.records) == ["kept"])
        #expect(contents.corruptRecords == 4)
        #expect(contents.tornBytes == 8)
    }

    @Test func openCutsATornTailSoTheNextRecordIsClean() throws {
        let scratch = ScratchFiles()
        scratch.write("j", Journal.encode(Array("a".utf8)) + Array("1234abcd half a rec".utf8), mode: 0o600)
        let journal = Journal(path: scratch.file("j"))
        let contents = try journal.open(limit: 1 << 20)
        #expect(text(contents.records) == ["a"])
        #expect(contents.tornBytes == 19)
        try journal.append(Array("b".utf8))
        #expect(text(try Journal(path: scratch.file("j")).open(limit: 1 << 20).records) == ["a", "b"])
        #expect(
            TestFiles.contents(scratch.file("j")) == Journal.encode(Array("a".utf8))
                + Journal.encode(Array("b".utf8)))
    }

    @Test func aRecordWithANewlineIsRefusedAndNothingWritten() throws {
        let scratch = ScratchFiles()
        let journal = Journal(path: scratch.file("j"))
        _ = try journal.open(limit: 100)
        #expect(throws: Errno.invalidArgument) { try journal.append([Array("ok".utf8), Array("a\nb".utf8)]) }
        #expect(TestFiles.contents(scratch.file("j")) == [])
        #expect(throws: Errno.invalidArgument) { try journal.replace(with: [[0x0A]]) }
    }

    @Test func anOversizeJournalIsNotLoaded() throws {
        let scratch = ScratchFiles()
        scratch.write("j", [UInt8](repeating: 0x41, count: 5000))
        #expect(throws: Errno(rawValue: EFBIG)) { try Journal(path: scratch.file("j")).open(limit: 4096) }
    }

    @Test func replaceRewritesAtomicallyAndKeepsAppending() throws {
        let scratch = ScratchFiles()
        let journal = Journal(path: scratch.file("j"))
        _ = try journal.open(limit: 1 << 20)
        for index in 0..<100 { try journal.append(Array("r\(index)".utf8)) }
        try journal.replace(with: [Array("r99".utf8)])
        try journal.append(Array("r100".utf8))
        #expect(text(try Journal(path: scratch.file("j")).open(limit: 1 << 20).records) == ["r99", "r100"])
        #expect(journal.size == Journal.encode(Array("r99".utf8)).count + Journal.encode(Array("r100".utf8)).count)
        #expect(TestFiles.entries(scratch.path) == ["j"])
    }

    /// ENOSPC in the middle of an append: the half-written record is cut off
    /// again, so what was there stays readable and later appends land cleanly.
    @Test(.enabled(if: TestMount.shouldRun, "needs root to mount a tmpfs"))
    func aFailedAppendLeavesNoHalfRecord() throws {
        let mount = try TestMount(sizeKiB: 64)
        defer { mount.unmount() }
        let journal = Journal(path: mount.path + "/j")
        _ = try journal.open(limit: 1 << 20)
        try journal.append(Array("before".utf8))
        let big = [UInt8](repeating: 0x62, count: 200 << 10)
        #expect(throws: Errno(rawValue: ENOSPC)) { try journal.append(big) }
        #expect(text(Journal.decode(TestFiles.contents(journal.path) ?? []).records) == ["before"])
        #expect(Journal.decode(TestFiles.contents(journal.path) ?? []).tornBytes == 0)
        try journal.append(Array("after".utf8))
        try journal.sync()
        #expect(text(try Journal(path: journal.path).open(limit: 1 << 20).records) == ["before", "after"])
    }
}
