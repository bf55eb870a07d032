import AklocJSON
import Foundation
import Testing

@testable import akloc

/// data/basemap.json as `akloc map` checks it before serving: the committed
/// file passes with its layers, and a wrong file is named with its problem.
/// What the page draws of it is tested in Chromium (Tests/Browser/test_map.py).
struct MapBasemapTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    private func write(_ bytes: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("akloc-basemap-\(UUID().uuidString).json").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func message(_ path: String) -> String? {
        do {
            _ = try MapData.basemap(path: path)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func theCommittedBaseMapHasItsLayers() throws {
        let path = Self.repository.appendingPathComponent("data/basemap.json").path
        let bytes = try MapData.basemap(path: path)
        let document = try JSONValue.parse(bytes).get()
        #expect(document["version"] == 1)
        #expect(document["scale"] == 10_000)
        // Natural Earth 1:10m: thousands of admin-1 lines, over a thousand lakes; GeoNames' towns.
        #expect((document["admin1"]?.arrayValue?.count ?? 0) > 5000)
        #expect((document["lakes"]?.arrayValue?.count ?? 0) > 1000)
        // GSHHG's WDB II rivers: the major ones first, then the rest; each line [x0, y0, dx1, dy1, …].
        let rivers = document["rivers"]?.arrayValue ?? []
        let majorRivers = Int(document["majorRivers"]?.doubleValue ?? 0)
        #expect(rivers.count > 1000)
        #expect(majorRivers > 100 && majorRivers < rivers.count)
        #expect(rivers.allSatisfy { ($0.arrayValue?.count ?? 0) >= 4 && ($0.arrayValue?.count ?? 0) % 2 == 0 })
        let places = document["places"]?.arrayValue ?? []
        #expect(places.count > 50_000)
        // Most populous first, each [x, y, thousands, name]; the first is a city of millions.
        #expect((places.first?.arrayValue?[2].doubleValue ?? 0) > 10_000)
        let names = Set(places.compactMap { $0.arrayValue?[3].stringValue })
        for name in ["Berlin", "Montpelier", "Littleton", "Enkhuizen"] { #expect(names.contains(name), "\(name)") }
    }

    @Test func aWrongFileIsNamedWithItsProblem() throws {
        let cases: [(bytes: [UInt8], expected: String)] = [
            (Array("garbage".utf8), "not a base map"),
            (Array("{\"format\":\"akloc-basemap\",\"version\":1,\"admin1\":[[1,2".utf8), "not a base map"),
            (Array("{\"type\":\"FeatureCollection\",\"features\":[]}".utf8), "\"format\": \"akloc-basemap\""),
            (Array("[\"akloc-basemap\"]".utf8), "\"format\": \"akloc-basemap\""),
            (Array("{\"format\":7}".utf8), "\"format\": \"akloc-basemap\""),
            ([], "not a base map"),
            ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "not a base map"),
        ]
        for (bytes, expected) in cases {
            let path = try write(bytes)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let text = message(path)
            #expect(text?.contains(path) == true, "\(String(describing: text))")
            #expect(text?.contains(expected) == true, "\(String(describing: text))")
        }
        let missing = "/nonexistent/akloc/basemap.json"
        #expect(message(missing)?.contains("cannot read \(missing)") == true)
        #expect(message(missing)?.contains("--data-dir") == true)
    }

    @Test func anEmptyBaseMapSaysWhy() throws {
        let bytes = MapData.emptyBasemap(error: .failure("cannot read /x/basemap.json: No such file"))
        let document = try JSONValue.parse(bytes).get()
        #expect(document["format"] == "akloc-basemap")
        #expect(document["akloc"]?["error"] == "cannot read /x/basemap.json: No such file")
    }
}
