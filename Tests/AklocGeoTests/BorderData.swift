import AklocGeo
import Foundation

/// data/borders.bin, data/timezones.bin and the airports reference, loaded
/// once per test process into memory that lives as long as it, as the
/// daemon's read-only mappings will.
enum BorderData {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// A file of the package (or an absolute path), in memory that is never freed.
    static func bytes(_ path: String) -> UnsafeRawBufferPointer {
        let url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : root.appendingPathComponent(path)
        let data = try! Data(contentsOf: url)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: data.count, alignment: 16)
        _ = data.copyBytes(to: buffer.bindMemory(to: UInt8.self))
        return UnsafeRawBufferPointer(buffer)
    }

    nonisolated(unsafe) static let bordersBytes = bytes("data/borders.bin")
    nonisolated(unsafe) static let zonesBytes = bytes("data/timezones.bin")
    nonisolated(unsafe) static let zoneCountriesBytes = bytes("data/zone-countries.tsv")
    static let zones = try! TimeZoneBorders(zonesBytes)
    static let borders = try! CountryBorders(bordersBytes, zones: zones, zoneCountries: zoneCountriesBytes)

    struct Airport {
        var icao: String
        var coordinate: Coordinate
        var country: String
        var zone: String
    }

    /// Tests/Fixtures/geo/airports-icao.csv (airportsdata, MIT).
    static let airports = reference("airports-icao.csv")

    /// Tests/Fixtures/geo/ourairports.csv (OurAirports, public domain): the second reference,
    /// with positions of its own and no time zones (`zone` is empty).
    static let ourAirports = reference("ourairports.csv")

    /// A reference file of Tests/Fixtures/geo: a header, then code, latitude, longitude,
    /// country and, when the file has one, the time zone.
    static func reference(_ name: String) -> [Airport] {
        let text = try! String(contentsOf: root.appendingPathComponent("Tests/Fixtures/geo/" + name), encoding: .utf8)
        return text.split(separator: "\n").dropFirst().map { line in
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return Airport(
                icao: f[0], coordinate: Coordinate(latitude: Double(f[1])!, longitude: Double(f[2])!),
                country: f[3], zone: f.count > 4 ? f[4] : "")
        }
    }

    /// SplitMix64, so a failing random point reproduces.
    struct Random: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
