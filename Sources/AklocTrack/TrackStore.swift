import AklocCore
import AklocPosix
import AklocProtocol

/// The recorded track on disk: one journal per UTC day (by when aklocd
/// received the point) in `<state>/track/`, named `YYYY-MM-DD.track`.
/// Appends go to today's file; whole oldest days are deleted when they
/// pass `retention-days` or the files together pass `max-size`.
///
/// Confinement: one owner on one queue (the recorder on the daemon's).
public final class TrackStore {
    public struct Limits: Hashable, Sendable {
        public var retentionDays: Int
        public var maxSize: Int

        public init(retentionDays: Int = 30, maxSize: Int = 64 << 20) {
            self.retentionDays = retentionDays
            self.maxSize = maxSize
        }
    }

    /// One page's points, each with the cursor just past it.
    public struct Page {
        public var points: [(point: TrackPoint, next: TrackCursor)] = []
        /// Whether points after the last one match too.
        public var more = false
    }

    public let directory: String
    public var limits: Limits
    private let log: (LogLevel, String) -> Void
    /// Bytes of each day file, by day number (days since 1970-01-01).
    public private(set) var days: [Int64: Int] = [:]
    private var journal: Journal?
    private var journalDay: Int64?
    /// Appended since the last sync.
    public private(set) var unsynced = false
    /// The day whose file reached `max-size` by itself (logged once).
    private var fullDay: Int64?
    /// Files already warned about (by their header id).
    private var warned: [String: UInt64] = [:]

    public init(directory: String, limits: Limits = Limits(), log: @escaping (LogLevel, String) -> Void) {
        self.directory = directory
        self.limits = limits
        self.log = log
    }

    public var totalBytes: Int { days.values.reduce(0, +) }

    public static func fileName(day: Int64) -> String {
        let (year, month, day) = FixTime.civil(fromDays: day)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2)).track"
    }

    public static func day(fromFileName name: String) -> Int64? {
        let bytes = Array(name.utf8)
        guard bytes.count == 16, name.hasSuffix(".track"), bytes[4] == 0x2D, bytes[7] == 0x2D,
            let year = Int(String(name.prefix(4))), let month = Int(String(name.dropFirst(5).prefix(2))),
            let day = Int(String(name.dropFirst(8).prefix(2))), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        let number = FixTime.days(fromCivil: year, month, day)
        return fileName(day: number) == name ? number : nil
    }

    public func path(day: Int64) -> String { directory + "/" + Self.fileName(day: day) }

    /// A day file's header id (0 for a file without a good header) and size.
    private func fileIdentity(day: Int64) throws(Errno) -> (file: UInt64, size: Int)? {
        let path = path(day: day)
        guard let size = try Journal.identity(of: path)?.size else { return nil }
        var file: UInt64 = 0
        let scan = try Journal.scan(path, chunkSize: 4096) { record, _ in
            file = TrackRecord.headerID(record) ?? 0
            return false
        }
        // Only the file's first line is its header.
        if scan.corruptRecords > 0 { file = 0 }
        return (file, size)
    }

    /// Creates the directory, finds the day files, applies the limits, and
    /// returns the last point recorded (its segment numbers go on from there).
    public func open(now: FixTime) throws(Errno) -> TrackPoint? {
        try FileSystem.createDirectory(directory, mode: 0o700)
        recoverImports()
        days = [:]
        for name in try FileSystem.entries(of: directory) {
            guard let day = Self.day(fromFileName: name), let identity = try Journal.identity(of: path(day: day))
            else { continue }
            days[day] = identity.size
        }
        enforceLimits(now: now)
        for day in days.keys.sorted(by: >) {
            let tail = Journal(path: path(day: day))
            let opened = try tail.openAppending()
            tail.close()
            if opened.tornBytes > 0 {
                log(
                    .warning,
                    "\(path(day: day)): cut off \(opened.tornBytes) byte(s) of a record whose write never finished")
            }
            days[day] = try Journal.identity(of: path(day: day))?.size ?? 0
            if let last = opened.last, let point = TrackRecord.decode(last) { return point }
        }
        return nil
    }

    /// Appends one point to its day's file (not synced: see `sync`).
    /// Returns false when the point was not kept because today's file
    /// alone has reached `max-size`.
    @discardableResult
    public func append(_ point: TrackPoint, now: FixTime) throws(Errno) -> Bool {
        let day = (point.location.receivedAt ?? now).day
        if journalDay != day || journal == nil {
            try closeJournal()
            let opened = Journal(path: path(day: day))
            _ = try opened.openAppending()
            if opened.size == 0 { try opened.append(TrackRecord.header(id: UInt64.random(in: 1...UInt64.max))) }
            journal = opened
            journalDay = day
            let isNew = days[day] == nil
            days[day] = opened.size
            if isNew { enforceLimits(now: now) }
        }
        guard let journal else { return false }
        guard journal.size < limits.maxSize else {
            if fullDay != day {
                fullDay = day
                log(
                    .warning,
                    "track: \(Self.fileName(day: day)) alone reached max-size \(limits.maxSize) bytes; "
                        + "no more points are recorded until the next day")
            }
            return false
        }
        try journal.append(TrackRecord.encode(point))
        days[day] = journal.size
        unsynced = true
        if totalBytes > limits.maxSize { enforceLimits(now: now) }
        return true
    }

    /// Waits until every appended point is on the disk.
    public func sync() throws(Errno) {
        guard unsynced, let journal else { return }
        try journal.sync()
        unsynced = false
    }

    public func close() {
        try? closeJournal()
    }

    private func closeJournal() throws(Errno) {
        defer {
            journal?.close()
            journal = nil
            journalDay = nil
        }
        try sync()
    }

    /// Deletes whole days: those entirely older than `retention-days`, then
    /// the oldest while the files together are over `max-size`. The day
    /// being written is never deleted. Each deletion is logged.
    public func enforceLimits(now: FixTime) {
        let today = now.day
        // A day is kept while any of its points can be younger than the retention.
        let oldestKept = today - Int64(limits.retentionDays)
        for day in days.keys.sorted() where day < oldestKept && day != journalDay {
            drop(day, reason: "older than retention-days \(limits.retentionDays)")
        }
        for day in days.keys.sorted() where totalBytes > limits.maxSize && day != journalDay {
            drop(day, reason: "the track was over max-size \(limits.maxSize) bytes")
        }
    }

    private func drop(_ day: Int64, reason: String) {
        let bytes = days[day] ?? 0
        do {
            try FileSystem.remove(path(day: day))
            days[day] = nil
            log(.notice, "track: deleted \(Self.fileName(day: day)) (\(bytes) bytes): \(reason)")
        } catch {
            log(.error, "track: cannot delete \(path(day: day)): \(error)")
        }
    }

    /// Forgets every point received before `before` (everything when nil):
    /// whole days are deleted, the day `before` falls in is rewritten
    /// atomically without its earlier points. Returns how many day files changed.
    @discardableResult
    public func clear(before: FixTime?) throws(Errno) -> Int {
        var changed = 0
        for day in days.keys.sorted() {
            let path = path(day: day)
            if let before, (day + 1) * 86_400 > before.secondsSince1970 {
                guard day <= before.day else { break }
                var kept: [[UInt8]] = [TrackRecord.header(id: UInt64.random(in: 1...UInt64.max))]
                var dropped = 0
                try Journal.scan(path) { record, _ in
                    if TrackRecord.headerID(record) != nil { return true }
                    if let point = TrackRecord.decode(record), let received = point.location.receivedAt,
                        received >= before
                    {
                        kept.append(Array(record))
                    } else {
                        dropped += 1
                    }
                    return true
                }
                guard dropped > 0 else { continue }
                if day == journalDay, let journal {
                    try journal.replace(with: kept)
                    days[day] = journal.size
                } else {
                    let rewritten = Journal(path: path)
                    try rewritten.replace(with: kept)
                    days[day] = rewritten.size
                    rewritten.close()
                }
                changed += 1
            } else {
                if day == journalDay { try closeJournal() }
                try FileSystem.remove(path)
                days[day] = nil
                changed += 1
            }
        }
        try FileSystem.syncDirectory(directory)
        return changed
    }

    /// Points received in `since...until`, in recording order, from
    /// `cursor` on, at most `limit`. Corrupt and torn records are skipped
    /// (with a warning, once per file and damage), never returned.
    public func page(since: FixTime, until: FixTime, after cursor: TrackCursor?, limit: Int) throws(TrackError)
        -> Page
    {
        var page = Page()
        if let cursor {
            let identity: (file: UInt64, size: Int)?
            do {
                identity = days[cursor.day] == nil ? nil : try fileIdentity(day: cursor.day)
            } catch {
                throw TrackError(.storageFailed, "cannot read \(path(day: cursor.day)): \(error)")
            }
            guard let identity, identity.file == cursor.file, cursor.offset <= identity.size else {
                throw TrackError(
                    .badCursor,
                    "the cursor is from another journal file (\(Self.fileName(day: cursor.day)) was cleared, "
                        + "rewritten or deleted since); start again without \"after\"")
            }
        }
        let firstDay = max(since.day, cursor?.day ?? .min)
        let lastDay = until.day
        for day in days.keys.sorted() where day >= firstDay && day <= lastDay {
            let path = path(day: day)
            let from = cursor?.day == day ? cursor!.offset : 0
            var malformed = 0
            let scan: Journal.Scan
            do {
                let file = try fileIdentity(day: day)?.file ?? 0
                scan = try Journal.scan(path, from: from) { record, end in
                    guard let point = TrackRecord.decode(record) else {
                        if TrackRecord.headerID(record) == nil { malformed += 1 }
                        return true
                    }
                    guard let received = point.location.receivedAt, received >= since, received <= until else {
                        return true
                    }
                    if page.points.count == limit {
                        page.more = true
                        return false
                    }
                    page.points.append((point, TrackCursor(day: day, file: file, offset: end)))
                    return true
                }
            } catch  where error == .noSuchFile {
                continue
            } catch {
                throw TrackError(.storageFailed, "cannot read \(path): \(error)")
            }
            let damage = scan.corruptRecords + malformed + (day == journalDay ? 0 : scan.tornBytes)
            if damage > 0, let file = try? fileIdentity(day: day)?.file, warned[path] != file {
                // Once per file (and incarnation of it), not on every page.
                warned[path] = file
                log(
                    .warning,
                    "\(path): skipped \(scan.corruptRecords + malformed) corrupt record(s)"
                        + (scan.tornBytes > 0 ? " and \(scan.tornBytes) torn byte(s)" : "")
                        + "; the other records are returned")
            }
            if page.more { break }
        }
        return page
    }

    // MARK: - Imports (TrackImport)

    /// Renames the merged day files of a committed import (`from`, its
    /// staging directory) over the journal's, and makes the renames durable.
    /// The day being appended to is closed first: the recorder reopens it,
    /// now the merged file, at its next point.
    func install(days installed: [Int64], from staging: String) throws(Errno) {
        for day in installed {
            if day == journalDay { try closeJournal() }
            let source = staging + "/" + Self.fileName(day: day)
            try FileSystem.rename(source, to: path(day: day))
            days[day] = try Journal.identity(of: path(day: day))?.size ?? 0
        }
        try FileSystem.syncDirectory(directory)
        log(.notice, "track: imported points into \(installed.count) day file(s)")
    }

    /// Imports a crash interrupted: one with its `COMMIT` marker is
    /// finished (its merged days renamed into place), any other is
    /// discarded, as if it had never been sent.
    func recoverImports() {
        guard let names = try? FileSystem.entries(of: directory) else { return }
        for name in names where name.hasPrefix(TrackImport.directoryPrefix) {
            let staging = directory + "/" + name
            if (try? FileSystem.status(staging + "/" + TrackImport.markerName)) != nil {
                var moved = 0
                for file in (try? FileSystem.entries(of: staging)) ?? [] where Self.day(fromFileName: file) != nil {
                    do {
                        try FileSystem.rename(staging + "/" + file, to: directory + "/" + file)
                        moved += 1
                    } catch {
                        log(.error, "track: cannot finish the import in \(staging): \(error)")
                        return
                    }
                }
                try? FileSystem.syncDirectory(directory)
                log(.notice, "track: finished an import a restart interrupted (\(moved) day file(s))")
            } else {
                log(.notice, "track: discarded an import that was never committed (\(staging))")
            }
            Self.removeStaging(staging)
        }
    }

    /// Deletes an import's staging directory and everything in it.
    static func removeStaging(_ staging: String) {
        for file in (try? FileSystem.entries(of: staging)) ?? [] { try? FileSystem.remove(staging + "/" + file) }
        try? FileSystem.removeDirectory(staging)
    }
}
