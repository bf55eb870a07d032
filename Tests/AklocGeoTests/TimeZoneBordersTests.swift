import AklocGeo
import Foundation
import Testing

@Suite struct TimeZoneBordersTests {
    let zones = BorderData.zones

    /// 2026-01-15 and 2026-07-15, 12:00 UTC.
    static let january: Int64 = 1_768_478_400
    static let july: Int64 = 1_784_116_800

    @Test func agreesWithTheAirportsReference() throws {
        var sameZone = 0
        var sameOffsets = 0
        var disagreements: [String: Int] = [:]
        for airport in BorderData.airports {
            let found = try zones.zone(at: airport.coordinate) ?? "none"
            if found == airport.zone {
                sameZone += 1
                sameOffsets += 1
                continue
            }
            if let ours = ZoneFiles.rules(found), let theirs = ZoneFiles.rules(airport.zone),
                [Self.january, Self.july].allSatisfy({
                    ours.localTime(at: $0).secondsFromGMT == theirs.localTime(at: $0).secondsFromGMT
                })
            {
                sameOffsets += 1
            } else {
                disagreements["\(airport.zone)->\(found)", default: 0] += 1
            }
        }
        let count = Double(BorderData.airports.count)
        let commonest = disagreements.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(12)
            .map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        print(
            "zones vs airportsdata: identical \(sameZone), same UTC offsets in January and July \(sameOffsets) of "
                + "\(BorderData.airports.count) (\(String(format: "%.2f %%", Double(sameOffsets) / count * 100))); "
                + "commonest disagreements (reference->ours): \(commonest)")
        #expect(Double(sameOffsets) / count >= 0.99)
    }
}

/// Debian tzdata's files, parsed once each.
enum ZoneFiles {
    nonisolated(unsafe) private static var cache: [String: TimeZoneRules?] = [:]
    private static let lock = NSLock()

    static func rules(_ identifier: String) -> TimeZoneRules? {
        lock.lock()
        defer { lock.unlock() }
        if let cached = cache[identifier] { return cached }
        var parsed: TimeZoneRules?
        if let path = TimeZoneInfo.relativePath(of: identifier),
            let data = FileManager.default.contents(atPath: "/usr/share/zoneinfo/" + path)
        {
            parsed = data.withUnsafeBytes { try? TimeZoneRules($0) }
        }
        cache[identifier] = parsed
        return parsed
    }
}
