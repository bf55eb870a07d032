import AklocCore
import AklocPosix
import AklocProtocol

/// One connection's import into the track (docs/track.md, "Importing"),
/// in three phases, none of which the journal shows until the last:
///
/// 1. **Staging.** Each `add` appends its points to a staging journal per
///    day in `<track>/.import-<id>/`, so a file of gigabytes costs disk,
///    not memory. A point the track cannot keep (in the future, older than
///    `retention-days`) refuses the whole import.
/// 2. **Merging**, a bounded number of points per `commit` step so the
///    daemon serves its other clients between steps: each day's existing
///    records and its imported points become a new day file in the staging
///    directory (`TrackImportMerge`), beside the one in use.
/// 3. **Installing**, in one step: a day the recorder or a `clearTrack`
///    changed since it was merged is merged again, the total is checked
///    against `max-size`, a `COMMIT` marker is written (and synced), and
///    each new day file is renamed over the old one. A crash before the
///    marker leaves the old journal (the staging directory is deleted at the
///    next start); a crash after it is finished at the next start by the
///    same renames (`TrackStore.recoverImports`).
///
/// Confinement: the daemon's queue, as the store.
public final class TrackImport {
    public struct Progress: Hashable, Sendable {
        public var done = false
        /// Points staged by `add`s so far.
        public var staged = 0
        public var imported = 0
        /// Points already in the track (or twice in the import).
        public var skipped = 0
        /// Day files written (or to be written) with imported points.
        public var days = 0
        /// Days still to merge.
        public var daysLeft = 0

        public init() {}
    }

    private enum Phase {
        case staging
        case merging(remaining: [Int64], segmenter: ImportSegmenter)
        case installed
    }

    /// The day being merged, over as many steps as its size takes.
    private struct DayMerge {
        var day: Int64
        var from: (inode: UInt64, size: Int)?
        var merge: TrackImportMerge
        let target: Journal
        /// Where pass 2 goes on in the day file (the start of a record).
        var offset = 0
        var existingDone: Bool
    }

    /// A day merged into the staging directory, and the day file it was merged from.
    private struct MergedDay {
        var from: (inode: UInt64, size: Int)?
        var size: Int
        var imported: Int
        var skipped: Int
    }

    public static let markerName = "COMMIT"
    public static let directoryPrefix = ".import-"
    /// Seconds a point may lie ahead of the daemon's clock (a phone's clock
    /// is not the daemon's).
    public static let futureLeeway: Int64 = 300

    private let store: TrackStore
    public let directory: String
    private let reserveSegments: (Int) -> UInt64
    private var phase = Phase.staging
    private var stagedPerDay: [Int64: Int] = [:]
    private var open: [Int64: Journal] = [:]
    private var merged: [Int64: MergedDay] = [:]
    private var current: DayMerge?
    /// Past the marker: the staging directory is the only record of what
    /// remains to rename, so it is kept for the next start.
    public private(set) var committed = false
    public private(set) var progress = Progress()

    /// Creates the staging directory. `reserveSegments(n)` hands out a block
    /// of n segment numbers the recorder will not use.
    public init(store: TrackStore, reserveSegments: @escaping (Int) -> UInt64) throws(TrackError) {
        self.store = store
        self.reserveSegments = reserveSegments
        directory = store.directory + "/" + Self.directoryPrefix + String(UInt64.random(in: 1...UInt64.max), radix: 16)
        do {
            try FileSystem.createDirectory(directory, mode: 0o700)
        } catch {
            throw TrackError(.storageFailed, "cannot create \(directory): \(error)")
        }
    }

    private func stagedPath(_ day: Int64) -> String {
        directory + "/" + TrackStore.fileName(day: day) + ".staged"
    }

    private func mergedPath(_ day: Int64) -> String { directory + "/" + TrackStore.fileName(day: day) }

    /// Stages `points`. A point the track cannot keep refuses the batch,
    /// naming it (`points[i]`); the caller then discards the import.
    public func add(_ points: [ImportPoint], now: FixTime) throws(TrackError) {
        guard case .staging = phase else {
            throw TrackError(.badImport, "this import is being committed: no more points can be added")
        }
        let oldestDay = now.day - Int64(store.limits.retentionDays)
        for (index, point) in points.enumerated() {
            if point.time.secondsSince1970 > now.secondsSince1970 + Self.futureLeeway {
                throw TrackError(
                    .badImport,
                    "\"points[\(index)]\": \(point.time.iso8601) is in the future (aklocd's clock: \(now.iso8601))")
            }
            if point.time.day < oldestDay {
                throw TrackError(
                    .badImport,
                    "\"points[\(index)]\": \(point.time.iso8601) is older than [track] retention-days "
                        + "(\(store.limits.retentionDays)), so it would be deleted at once; raise retention-days "
                        + "(up to 36500) in akloc.conf to import it")
            }
        }
        var batches: [Int64: [[UInt8]]] = [:]
        for point in points {
            let location = Location(
                latitude: point.latitude, longitude: point.longitude, mode: point.altitude == nil ? .twoD : .threeD,
                altitude: point.altitude, horizontalAccuracy: point.horizontalAccuracy, timestamp: point.time,
                receivedAt: point.time, device: "import")
            batches[point.time.day, default: []].append(
                TrackRecord.encode(TrackPoint(location: location, segment: UInt64(point.segment))))
        }
        do {
            for (day, records) in batches {
                let journal: Journal
                if let known = open[day] {
                    journal = known
                } else {
                    // A file whose points jump between days keeps a few open, not one per day.
                    if open.count >= 8 { closeStaging() }
                    journal = Journal(path: stagedPath(day))
                    _ = try journal.openAppending()
                    open[day] = journal
                }
                try journal.append(records)
                stagedPerDay[day, default: 0] += records.count
            }
        } catch {
            throw TrackError(.storageFailed, "cannot stage imported points in \(directory): \(error)")
        }
        progress.staged += points.count
    }

    private func closeStaging() {
        for journal in open.values { journal.close() }
        open = [:]
    }

    /// One step of the commit: about `budget` records merged (a day's
    /// imported points count when its merge begins, its written records as
    /// they are written, so a day of any size takes several steps), or
    /// everything installed when all are merged.
    public func commitStep(budget: Int = 20_000) throws(TrackError) -> Progress {
        switch phase {
        case .installed:
            return progress
        case .staging:
            closeStaging()
            let first = reserveSegments(progress.staged)
            let segmenter = ImportSegmenter(first: first, limit: first &+ UInt64(progress.staged))
            phase = .merging(remaining: stagedPerDay.keys.sorted(by: >), segmenter: segmenter)
            return try commitStep(budget: budget)
        case .merging(var remaining, var segmenter):
            var work = 0
            while work < budget {
                if var day = current {
                    let (written, done) = try advance(&day, limit: budget - work)
                    work += max(1, written)
                    current = day
                    if done {
                        current = nil
                        try finish(day)
                    }
                } else if let day = remaining.popLast() {
                    work += stagedPerDay[day] ?? 0
                    current = try begin(day, segmenter: &segmenter)
                } else {
                    break
                }
            }
            phase = .merging(remaining: remaining, segmenter: segmenter)
            progress.daysLeft = remaining.count + (current == nil ? 0 : 1)
            if remaining.isEmpty, current == nil { try install(segmenter: &segmenter) }
            return progress
        }
    }

    /// A whole day at once (a day changed while it was being merged).
    private func mergeWhole(_ day: Int64, segmenter: inout ImportSegmenter) throws(TrackError) {
        guard var merging = try begin(day, segmenter: &segmenter) else { return }
        _ = try advance(&merging, limit: .max)
        try finish(merging)
    }

    /// Pass 1 of a day: the keys of its file and its imported points, in
    /// time order without those already there; then its new file begun in
    /// the staging directory. Nil when nothing of the day is new.
    private func begin(_ day: Int64, segmenter: inout ImportSegmenter) throws(TrackError) -> DayMerge? {
        let path = store.path(day: day)
        var merge = TrackImportMerge()
        var staged: [ImportPoint] = []
        let from: (inode: UInt64, size: Int)?
        do {
            from = try Journal.identity(of: path)
            if from != nil {
                try Journal.scan(path) { record, _ in
                    merge.see(existing: record)
                    return true
                }
            }
            try Journal.scan(stagedPath(day)) { record, _ in
                if let point = TrackRecord.decode(record), let time = point.location.timestamp {
                    let location = point.location
                    staged.append(
                        ImportPoint(
                            time: time, latitude: location.latitude, longitude: location.longitude,
                            altitude: location.altitude, horizontalAccuracy: location.horizontalAccuracy,
                            segment: Int64(point.segment)))
                }
                return true
            }
        } catch {
            throw TrackError(.storageFailed, "cannot read \(path) to import into it: \(error)")
        }
        merge.take(staged, segmenter: &segmenter)
        staged = []
        if let previous = merged[day] {
            progress.imported -= previous.imported
            progress.skipped -= previous.skipped
            progress.days -= previous.imported > 0 ? 1 : 0
        }
        progress.imported += merge.imported
        progress.skipped += merge.skipped
        guard merge.imported > 0 else {
            // A day merged before and again now with nothing new: its old
            // merge must not be installed by a recovery either.
            try? FileSystem.remove(mergedPath(day))
            merged[day] = MergedDay(from: from, size: 0, imported: 0, skipped: merge.skipped)
            return nil
        }
        progress.days += 1
        let target = Journal(path: mergedPath(day))
        do {
            try FileSystem.remove(mergedPath(day))
            _ = try target.openAppending()
            try target.append(TrackRecord.header(id: UInt64.random(in: 1...UInt64.max)))
        } catch {
            target.close()
            throw TrackError(.storageFailed, "cannot write \(mergedPath(day)): \(error)")
        }
        return DayMerge(day: day, from: from, merge: merge, target: target, existingDone: from == nil)
    }

    /// Pass 2 of a day, from where it stopped: at most about `limit`
    /// records written. Returns how many, and whether the day is complete.
    private func advance(_ day: inout DayMerge, limit: Int) throws(TrackError) -> (written: Int, done: Bool) {
        var out: [[UInt8]] = []
        var written = 0
        var failure: Errno?
        let path = store.path(day: day.day)
        let target = day.target
        do {
            if !day.existingDone {
                var stopped = false
                var merge = day.merge
                var offset = day.offset
                // A file cleared meanwhile is done: the install merges this day again.
                if try Journal.identity(of: path) != nil {
                    try Journal.scan(path, from: offset) { record, end in
                        let bytes = Array(record)
                        guard let time = merge.receiptTime(of: bytes) else {
                            offset = end
                            return true
                        }
                        let room = limit == .max ? Int.max : max(0, limit - written - out.count)
                        // Points due before this record first; when they pass the
                        // limit the record waits for the next step.
                        guard merge.emitNew(before: time, limit: room, into: &out) else {
                            stopped = true
                            return false
                        }
                        out.append(bytes)
                        offset = end
                        if out.count >= 4096 {
                            do throws(Errno) {
                                written += try Self.write(&out, to: target)
                            } catch {
                                failure = error
                                return false
                            }
                        }
                        if written + out.count >= limit {
                            stopped = true
                            return false
                        }
                        return true
                    }
                }
                day.merge = merge
                day.offset = offset
                if let failure { throw failure }
                day.existingDone = !stopped
            }
            if day.existingDone {
                let room = limit == .max ? Int.max : max(0, limit - written - out.count)
                _ = day.merge.emitNew(before: nil, limit: room, into: &out)
            }
            written += try Self.write(&out, to: target)
        } catch {
            throw TrackError(.storageFailed, "cannot merge \(path) into \(mergedPath(day.day)): \(error)")
        }
        return (written, day.existingDone && day.merge.pending == 0)
    }

    /// Appends `out` to `target` and empties it; returns how many records.
    private static func write(_ out: inout [[UInt8]], to target: Journal) throws(Errno) -> Int {
        guard !out.isEmpty else { return 0 }
        try target.append(out)
        defer { out.removeAll(keepingCapacity: true) }
        return out.count
    }

    /// A day completely merged: its new file synced, ready to install.
    private func finish(_ day: DayMerge) throws(TrackError) {
        defer { day.target.close() }
        do {
            try day.target.sync()
        } catch {
            throw TrackError(.storageFailed, "cannot write \(mergedPath(day.day)): \(error)")
        }
        merged[day.day] = MergedDay(
            from: day.from, size: day.target.size, imported: day.merge.imported, skipped: day.merge.skipped)
    }

    /// Re-merges what changed since, checks `max-size`, marks the import
    /// committed and renames the merged days into the journal.
    private func install(segmenter: inout ImportSegmenter) throws(TrackError) {
        for day in merged.keys.sorted() {
            let now: (inode: UInt64, size: Int)?
            do {
                now = try Journal.identity(of: store.path(day: day))
            } catch {
                throw TrackError(.storageFailed, "cannot read \(store.path(day: day)): \(error)")
            }
            let before = merged[day]!.from
            if now?.inode != before?.inode || now?.size != before?.size { try mergeWhole(day, segmenter: &segmenter) }
        }
        let installing = merged.filter { $0.value.imported > 0 }
        var total = store.totalBytes
        for (day, merge) in installing { total += merge.size - (store.days[day] ?? 0) }
        guard total <= store.limits.maxSize else {
            throw TrackError(
                .badImport,
                "with the imported points the track would be \(total) bytes, over [track] max-size "
                    + "(\(store.limits.maxSize)); raise max-size in akloc.conf (up to 64G) to import this")
        }
        do {
            try AtomicFile.write(
                Array("\(installing.count)\n".utf8), to: directory + "/" + Self.markerName, mode: 0o600)
        } catch {
            throw TrackError(.storageFailed, "cannot commit the import in \(directory): \(error)")
        }
        committed = true
        do {
            try store.install(days: installing.keys.sorted(), from: directory)
        } catch {
            // Past the marker the import is committed: the next start finishes it.
            throw TrackError(
                .storageFailed,
                "the import is committed but not all of it is in place yet (\(error)); it is finished when aklocd next starts"
            )
        }
        phase = .installed
        progress.done = true
        progress.daysLeft = 0
        discard()
    }

    /// Deletes the staging directory (an abort, a refusal, or after installing).
    public func discard() {
        closeStaging()
        current?.target.close()
        current = nil
        guard !committed || progress.done else { return }
        TrackStore.removeStaging(directory)
    }
}
