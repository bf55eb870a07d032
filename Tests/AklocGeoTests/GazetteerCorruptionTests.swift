import AklocCore
import Foundation
import Testing

@testable import AklocGeo

/// A damaged places file gives `GeoDataReader.Error`, from opening or from
/// the lookup that meets the damage: never a crash or a read outside the
/// buffer (the test process would die). Lookups that succeed on a damaged
/// file may give wrong answers; that is fine, the file is wrong.
@Suite struct GazetteerCorruptionTests {
    static let original = Array(GeoFixtures.placesBytes)

    static func withCopy<T>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        // An exact-size heap copy, so a read past the end is a real overrun.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: bytes)
        return try body(UnsafeRawBufferPointer(buffer))
    }

    static func openError(_ bytes: [UInt8]) -> GeoDataReader.Error.Code? {
        withCopy(bytes) { raw -> GeoDataReader.Error.Code? in
            do {
                _ = try Gazetteer(raw)
                return nil
            } catch let error as GeoDataReader.Error {
                return error.code
            } catch {
                Issue.record("not a reader error: \(error)")
                return nil
            }
        }
    }

    /// Runs lookups; every error must be the reader's.
    static func exercise(_ gazetteer: Gazetteer, _ random: inout GeoFixtures.Random) {
        let queries = ["zur", "zurich", "new y", "enk", "den haag"]
        for _ in 0..<10 {
            let point = GeoFixtures.randomPoint(&random)
            do {
                _ = try gazetteer.placemark(at: point)
                _ = try gazetteer.nearest(to: point, countryCode: "NL")
                _ = try gazetteer.places(within: 50_000, of: point)
                _ = try gazetteer.searchPlaces(queries.randomElement(using: &random)!, near: point, within: 0)
                _ = try gazetteer.place(at: Int.random(in: 0..<gazetteer.count, using: &random))
            } catch is GeoDataReader.Error {
            } catch {
                Issue.record("not a reader error: \(error)")
            }
        }
    }

    @Test func garbageEmptyAndWrongHeadersAreRefused() {
        #expect(Self.openError([]) == .truncated)
        #expect(Self.openError(Array(Self.original.prefix(63))) == .truncated)
        var random = GeoFixtures.Random(seed: 31)
        let garbage = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) }
        #expect(Self.openError(garbage) == .badMagic)
        var version = Self.original
        version[4] = 9
        #expect(Self.openError(version) == .badVersion)
        var recordSize = Self.original
        recordSize[56] = 40
        #expect(Self.openError(recordSize) == .badVersion)
        #expect(Self.openError(Array("AKPL".utf8) + [UInt8](repeating: 0xFF, count: 60)) != nil)
    }

    @Test func truncatedAndOversizeFilesAreRefused() {
        let n = Self.original.count
        for length in [64, 100, 4096, n / 3, n / 2, n - 4096, n - 1] {
            #expect(Self.openError(Array(Self.original.prefix(length))) == .truncated, "\(length)")
        }
        #expect(Self.openError(Self.original + [0]) == .truncated)
        #expect(Self.openError(Self.original + [UInt8](repeating: 0, count: 1 << 20)) == .truncated)
    }

    @Test func headerCountsAndOffsetsOutOfRangeAreRefused() {
        // Each count and offset field set to huge, and to a value moving a section.
        for field in 2..<14 {
            for value: UInt32 in [0xFFFF_FFFF, 0x7FFF_FFFF, 1] {
                var bytes = Self.original
                withUnsafeBytes(of: value.littleEndian) { raw in
                    for i in 0..<4 { bytes[4 * field + i] = raw[i] }
                }
                let original = Array(Self.original[(4 * field)..<(4 * field + 4)])
                if original == withUnsafeBytes(of: value.littleEndian, Array.init) { continue }
                if let code = Self.openError(bytes) {
                    #expect([.truncated, .corrupt, .badVersion].contains(code))
                } else {
                    // Shrinking a count can leave a consistent file: it must still not crash.
                    var random = GeoFixtures.Random(seed: UInt64(field))
                    Self.withCopy(bytes) { raw in Self.exercise(try! Gazetteer(raw), &random) }
                }
            }
        }
    }

    @Test func flippedBytesInEverySectionNeverCrash() throws {
        var random = GeoFixtures.Random(seed: 32)
        let n = Self.original.count
        for round in 0..<30 {
            var bytes = Self.original
            // Damage a run of bytes somewhere past the header, and in one round in each section.
            let start = Int.random(in: 64..<n - 256, using: &random)
            let length = round % 2 == 0 ? 64 : 256
            for i in start..<(start + length) { bytes[i] = UInt8.random(in: 0...255, using: &random) }
            try Self.withCopy(bytes) { raw in
                let gazetteer = try Gazetteer(raw)
                Self.exercise(gazetteer, &random)
            }
        }
        // All the records' references pointing far away.
        var bytes = Self.original
        let recordsOffset = 64
        for i in stride(from: recordsOffset + 12, to: recordsOffset + 36 * 5000, by: 36) {
            for j in 0..<4 { bytes[i + j] = 0xFE }
            bytes[i + 22] = 7  // the split axis
        }
        try Self.withCopy(bytes) { raw in
            let gazetteer = try Gazetteer(raw)
            Self.exercise(gazetteer, &random)
            #expect(throws: GeoDataReader.Error.self) { try gazetteer.place(at: 0) }
        }
    }
}
