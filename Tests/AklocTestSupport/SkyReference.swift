import Foundation

/// What the tests compare of a sky view: the counts, the PRNs in order, the
/// used flags and the HDOP, read from gpspipe's SKY objects (the reference)
/// or from akloc's `satellites` value, independently of akloc's decoders.
public struct SkySummary: Hashable, Sendable, CustomStringConvertible {
    public var visible: Int
    public var used: Int
    public var prns: [Int]
    public var usedFlags: [Bool]
    public var hdop: Double?

    public var description: String {
        let list = zip(prns, usedFlags).map { "\($0.0)\($0.1 ? "*" : "")" }.joined(separator: " ")
        return "\(used)/\(visible) hdop \(hdop.map { "\($0)" } ?? "-") [\(list)]"
    }

    /// gpspipe's SKY object, as gpsd wrote it. `nSat`/`uSat` when gpsd sent
    /// them, else counted from the list, as gpsd counts them.
    public init(gpsd sky: [String: Any]) {
        let satellites = sky["satellites"] as? [[String: Any]] ?? []
        prns = satellites.map { ($0["PRN"] as? Int) ?? -1 }
        usedFlags = satellites.map { ($0["used"] as? Bool) ?? false }
        visible = (sky["nSat"] as? Int) ?? satellites.count
        used = (sky["uSat"] as? Int) ?? usedFlags.filter { $0 }.count
        hdop = sky["hdop"] as? Double
    }

    /// akloc's `satellites` value (docs/protocol.md §7).
    public init?(akloc value: Any?) {
        guard let sky = value as? [String: Any], let visible = sky["visible"] as? Int,
            let used = sky["used"] as? Int, let satellites = sky["satellites"] as? [[String: Any]]
        else { return nil }
        self.visible = visible
        self.used = used
        prns = satellites.map { ($0["prn"] as? Int) ?? -1 }
        usedFlags = satellites.map { ($0["used"] as? Bool) ?? false }
        hdop = sky["hdop"] as? Double
    }

    /// gpspipe's SKY objects, each one whose sky differs from the one before
    /// (what a `satellites` observer with `minInterval` 0 is sent): compared
    /// on what akloc reads of a SKY, not on its time or gpsd's other members.
    public static func changes(in objects: [[String: Any]]) -> [SkySummary] {
        var result: [SkySummary] = []
        var previous: NSDictionary?
        for object in objects where object["class"] as? String == "SKY" {
            var kept: [String: Any] = [:]
            for key in ["device", "hdop", "vdop", "pdop", "tdop", "gdop", "xdop", "ydop"] { kept[key] = object[key] }
            kept["satellites"] = (object["satellites"] as? [[String: Any]] ?? []).map { satellite in
                satellite.filter { ["PRN", "gnssid", "svid", "el", "az", "ss", "used"].contains($0.key) }
            }
            let content = kept as NSDictionary
            if let previous, previous.isEqual(content) { continue }
            previous = content
            result.append(SkySummary(gpsd: object))
        }
        return result
    }

    /// Checks `seen` (akloc's, from its first on) against the reference: it
    /// must start at one of the reference's changes and follow it to the end.
    /// Returns nil when it does, else what differs first.
    /// Whether `seen` is gpspipe's sequence from akloc's first change on.
    /// A client that falls behind has changes coalesced (DESIGN §4: the
    /// newest value replaces one still queued), so `seen` may skip some,
    /// never reorder or invent them; every skip must be one the daemon
    /// counted in `coalesced` (its status counter `eventsCoalesced`).
    public static func mismatch(_ seen: [SkySummary], reference: [SkySummary], coalesced: Int = 0) -> String? {
        guard let first = seen.first else { return "akloc sent no sky" }
        guard let start = reference.firstIndex(of: first) else {
            return "akloc's first sky \(first) is none of gpspipe's \(reference.count)"
        }
        var next = start
        var skipped = 0
        for (index, got) in seen.enumerated() {
            guard let found = reference[next...].firstIndex(of: got) else {
                return
                    "change \(index): akloc \(got), gpspipe \(next < reference.count ? "\(reference[next])" : "nothing more")"
            }
            if found > next, skipped + (found - next) > coalesced {
                return "change \(index): akloc \(got), gpspipe \(reference[next]) (\(found - next) skipped here, "
                    + "\(skipped) before, the daemon coalesced \(coalesced))"
            }
            skipped += found - next
            next = found + 1
        }
        if next != reference.count {
            return "akloc sent \(seen.count) changes, gpspipe has \(reference.count - start) from akloc's first on"
                + " (its last \(reference.count - next) missing)"
        }
        return nil
    }
}
