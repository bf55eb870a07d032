import AklocGeo
import AklocPosix
import Synchronization

/// tzdata's zone files (`$TZDIR` or /usr/share/zoneinfo), parsed once per
/// zone on first use: a fix stays in one or two zones, so the cache stays a
/// few kilobytes, where loading all 400 would cost a megabyte.
final class TimeZoneCatalog: Sendable {
    let directory: String
    private let cache = Mutex<[String: TimeZoneRules?]>([:])

    init(directory: String) {
        self.directory = directory
    }

    /// The rules of an IANA identifier; nil for a name tzdata does not have
    /// (or one that could leave the directory), or a damaged file.
    func rules(_ identifier: String) -> TimeZoneRules? {
        if let known = cache.withLock({ $0[identifier] }) { return known }
        var rules: TimeZoneRules?
        if let relative = TimeZoneInfo.relativePath(of: identifier),
            let bytes = try? FileReader.read("\(directory)/\(relative)", limit: TimeZoneRules.maximumSize),
            bytes.count <= TimeZoneRules.maximumSize
        {
            rules = bytes.withUnsafeBytes { try? TimeZoneRules($0) }
        }
        cache.withLock { $0[identifier] = rules }
        return rules
    }
}
