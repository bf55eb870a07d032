import AklocJSON
import Foundation
import Testing

/// `JSONValue.validate` can stand in for GPSDLine's own syntax checker: every
/// JSON line gpsd 3.22 wrote for the bundled captures (the `.chk` files of
/// gpsd's regression tests, data this code was not written from) passes,
/// reports its leading `class`, and agrees with the building parser.
@Suite struct GPSDCaptureTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/gpsd-logs")

    static func jsonLines() throws -> [[UInt8]] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".chk") }
        var lines: [[UInt8]] = []
        for name in names.sorted() {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            // gpsd ends its lines with "\r\n"; "\r" is JSON whitespace, kept off so truncations are real.
            lines += data.split(separator: 0x0A).filter { $0.first == UInt8(ascii: "{") }.map {
                Array($0.last == 0x0D ? $0.dropLast() : $0)
            }
        }
        return lines
    }

    @Test func everyLineGPSDWroteValidatesWithItsClass() throws {
        let lines = try Self.jsonLines()
        #expect(lines.count > 1000, "found only \(lines.count) gpsd JSON lines in \(Self.directory.path)")
        var classes: [String: Int] = [:]
        for line in lines {
            let parsed = try JSONValue.parse(line).get()
            let outline = try JSONValue.validate(line).get()
            #expect(outline.kind == .object)
            #expect(outline.firstKey == "class", "\(String(decoding: line, as: UTF8.self))")
            #expect(outline.firstString == parsed["class"]?.stringValue)
            classes[outline.firstString ?? "?", default: 0] += 1
        }
        #expect(classes["TPV", default: 0] > 100)
        print("validated \(lines.count) gpsd lines: \(classes.sorted { $0.key < $1.key })")
    }

    @Test func everyTruncatedGPSDLineIsRejected() throws {
        let lines = try Self.jsonLines().prefix(50)
        for line in lines {
            for end in 1..<line.count {
                if case .success = JSONValue.validate(line[0..<end]) {
                    Issue.record("accepted \(String(decoding: line[0..<end], as: UTF8.self))")
                }
            }
        }
    }
}
