// Lookup latency harness, built and run by scripts/geodata/bench-lookups.sh (not a SwiftPM target).
import AklocGeo
import Foundation

func load(_ path: String) -> UnsafeRawBufferPointer {
    let data = try! Data(contentsOf: URL(fileURLWithPath: path))
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: data.count, alignment: 16)
    _ = data.copyBytes(to: buffer.bindMemory(to: UInt8.self))
    return UnsafeRawBufferPointer(buffer)
}
let root = CommandLine.arguments[1]
let zones = try! TimeZoneBorders(load(root + "/data/timezones.bin"))
let borders = try! CountryBorders(load(root + "/data/borders.bin"), zones: zones, zoneCountries: load(root + "/data/zone-countries.tsv"))
let text = try! String(contentsOfFile: root + "/Tests/Fixtures/geo/airports-icao.csv", encoding: .utf8)
var points: [Coordinate] = text.split(separator: "\n").dropFirst().map { line in
    let f = line.split(separator: ",")
    return Coordinate(latitude: Double(f[1])!, longitude: Double(f[2])!)
}
var rng = SystemRandomNumberGenerator()
for _ in 0..<10000 { points.append(Coordinate(latitude: Double.random(in: -80...80, using: &rng), longitude: Double.random(in: -180...180, using: &rng))) }
func measure(_ name: String, _ body: (Coordinate) throws -> Void) rethrows {
    var samples: [Double] = []
    for p in points {
        let t0 = DispatchTime.now().uptimeNanoseconds
        try body(p)
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1000)
    }
    samples.sort()
    print(name, "n", samples.count, "p50", samples[samples.count / 2], "p99", samples[samples.count * 99 / 100], "max", samples.last!, "µs")
}
for _ in 0..<2 {
try! measure("country (zone+NE+sea)") { _ = try borders.country(at: $0) }
try! measure("country Natural Earth only") { _ = try borders.naturalEarthCountry(at: $0) }
try! measure("time zone") { _ = try zones.zone(at: $0) }
}
