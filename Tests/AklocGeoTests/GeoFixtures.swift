import AklocGeo
import AklocTestSupport
import Foundation

/// The committed data and fixtures, loaded once per test process.
enum GeoFixtures {
    static func url(_ path: String) -> URL { Binaries.packageRoot.appendingPathComponent(path) }

    /// data/places.bin copied into memory that lives as long as the process,
    /// as the daemon's mapping does.
    nonisolated(unsafe) static let placesBytes: UnsafeRawBufferPointer = {
        let bytes = TestFiles.contents(url("data/places.bin").path)!
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
        buffer.copyBytes(from: bytes)
        return UnsafeRawBufferPointer(buffer)
    }()

    static let gazetteer: Gazetteer = try! Gazetteer(placesBytes)

    static func csv(_ path: String) throws -> [[String: String]] {
        let text = try String(contentsOf: url(path), encoding: .utf8)
        var lines = text.split(separator: "\n").map(String.init)
        let header = lines.removeFirst().split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        return lines.map { line in
            let fields = splitCSV(line)
            return Dictionary(uniqueKeysWithValues: zip(header, fields))
        }
    }

    /// One CSV line with Python's csv quoting (quotes around fields with commas).
    static func splitCSV(_ line: String) -> [String] {
        var fields: [String] = []
        var current = ""
        var quoted = false
        let chars = Array(line)
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if quoted {
                if c != "\"" {
                    current.append(c)
                } else if i + 1 < chars.count, chars[i + 1] == "\"" {
                    current.append("\"")
                    i += 1
                } else {
                    quoted = false
                }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                fields.append(current)
                current = ""
            } else {
                current.append(c)
            }
            i += 1
        }
        fields.append(current)
        return fields
    }

    /// A deterministic generator (SplitMix64), so a failure reproduces.
    struct Random: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// A uniform point on the sphere.
    static func randomPoint(_ random: inout Random) -> Coordinate {
        let z = Double.random(in: -1...1, using: &random)
        let latitude = asin(z) * 180 / .pi
        let longitude = Double.random(in: -180..<180, using: &random)
        return Coordinate(latitude: latitude, longitude: longitude)
    }
}
