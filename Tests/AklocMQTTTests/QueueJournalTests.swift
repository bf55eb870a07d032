import AklocCore
import AklocPosix
import Foundation
import Testing

@testable import AklocMQTT

private func temporaryDirectory() -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(
        "akloc-journal-\(UUID().uuidString.prefix(8))"
    )
    .path
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

private func entry(_ seq: UInt64, _ text: String = "{\"_type\":\"location\",\"lat\":1}") -> ForwardQueue.Entry {
    ForwardQueue.Entry(
        seq: seq, queuedAt: FixTime(secondsSince1970: 1_700_000_000 + Int64(seq), nanoseconds: 5),
        payload: Array(text.utf8))
}

@Suite struct QueueJournalTests {
    @Test func entriesSurviveReopeningMinusAcksAndDrops() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = QueueJournal(directory: directory)
        #expect(try journal.open().entries.isEmpty)
        for seq: UInt64 in 1...4 { try journal.append(entry(seq)) }
        try journal.remove([2])
        try journal.remove([3], reason: .maxAge)
        let reopened = try QueueJournal(directory: directory).open()
        #expect(reopened.entries == [entry(1), entry(4)])
        #expect(reopened.nextSeq == 5)
        #expect(reopened.warnings.isEmpty)
    }

    @Test func aTornLastLineIsSkippedWithAWarning() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = QueueJournal(directory: directory)
        _ = try journal.open()
        try journal.append(entry(1))
        try journal.append(entry(2))
        // What a SIGKILL in the middle of write(2) leaves behind.
        let handle = try #require(FileHandle(forWritingAtPath: journal.path))
        handle.seekToEndOfFile()
        handle.write(Data(Journal.encode(QueueJournal.record(entry(3))).prefix(30)))
        handle.closeFile()
        let reopened = QueueJournal(directory: directory)
        let loaded = try reopened.open()
        #expect(loaded.entries.map(\.seq) == [1, 2])
        #expect(loaded.warnings.count == 1)
        #expect(loaded.warnings.first?.contains("torn") == true)
        // The reopen compacted the torn bytes away: the next append is clean.
        try reopened.append(entry(3))
        let again = try QueueJournal(directory: directory).open()
        #expect(again.entries.map(\.seq) == [1, 2, 3])
        #expect(again.warnings.isEmpty)
    }

    @Test func garbageRecordsAreCountedAndSkipped() {
        let records = ["{\"next\":5}", "not json", "{\"hello\":1}", "{\"seq\":-1,\"queuedAt\":1,\"payload\":\"x\"}"]
        let loaded = QueueJournal.parse(records.map { Array($0.utf8) } + [QueueJournal.record(entry(6))])
        #expect(loaded.entries.map(\.seq) == [6])
        #expect(loaded.nextSeq == 7)
        #expect(loaded.warnings == ["skipped 3 unreadable record(s)"])
    }

    @Test func payloadsRoundTripByteForByte() {
        let text = #"{"_type":"location","tid":"a\"b\\c","lat":52.5}"#
        let loaded = QueueJournal.parse([QueueJournal.record(entry(1, text))])
        #expect(loaded.entries.first?.payload == Array(text.utf8))
        #expect(loaded.entries.first?.queuedAt == FixTime(secondsSince1970: 1_700_000_001, nanoseconds: 5))
    }

    @Test func compactionKeepsOnlyLiveEntriesAndTheNextSeq() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = QueueJournal(directory: directory)
        _ = try journal.open()
        for seq: UInt64 in 1...600 { try journal.append(entry(seq)) }
        try journal.remove([UInt64](1...599))
        #expect(journal.shouldCompact(liveEntries: 1))
        try journal.compact([entry(600)], nextSeq: 601)
        #expect(!journal.shouldCompact(liveEntries: 1))
        try journal.remove([600])
        try journal.compact([], nextSeq: 601)
        let size = try FileManager.default.attributesOfItem(atPath: journal.path)[.size] as? Int
        #expect(size == Journal.encode(Array("{\"next\":601}".utf8)).count)
        #expect(try QueueJournal(directory: directory).open().nextSeq == 601)
    }

    @Test func aRecordWithABadChecksumIsNeverTakenForData() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = QueueJournal(directory: directory)
        _ = try journal.open()
        try journal.append(entry(1))
        try journal.append(entry(2))
        // Flip one payload bit of the second record, on disk.
        var bytes = try #require(FileManager.default.contents(atPath: journal.path))
        let index = try #require(bytes.lastIndex(of: UInt8(ascii: "1")))
        bytes[index] = UInt8(ascii: "9")
        try bytes.write(to: URL(fileURLWithPath: journal.path))
        let loaded = try QueueJournal(directory: directory).open()
        #expect(loaded.entries.map(\.seq) == [1])
        #expect(loaded.warnings == ["skipped 1 record(s) with a bad checksum"])
    }

    @Test func aQueueFromAnOlderAklocdIsCarriedOver() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let legacy = directory + "/" + QueueJournal.legacyFileName
        let lines = [QueueJournal.record(entry(7)), Array("{\"ack\":6}".utf8), QueueJournal.record(entry(8))]
        let text = lines.map { String(decoding: $0, as: UTF8.self) + "\n" }.joined() + "{\"seq\":9,\"que"
        try Data(text.utf8).write(to: URL(fileURLWithPath: legacy))
        let loaded = try QueueJournal(directory: directory).open()
        #expect(loaded.entries == [entry(7), entry(8)])
        #expect(loaded.nextSeq == 9)
        #expect(loaded.warnings.count == 1)
        #expect(!FileManager.default.fileExists(atPath: legacy), "carried over once, then removed")
        let again = try QueueJournal(directory: directory).open()
        #expect(again.entries == [entry(7), entry(8)])
        #expect(again.warnings.isEmpty)
    }
}
