import AklocCore
import AklocPosix
import AklocProtocol

/// Records the fixes its engine subscriber is given (DESIGN §10): one more
/// subscriber with its own `[track]` policy, writing each point to the day
/// journal at once and syncing at most every `sync-interval` seconds, so a
/// SIGKILL or power cut loses at most the points of the last interval.
/// Serves `track` pages and `clearTrack` from the same store.
///
/// Confinement: on the daemon's queue, like the MQTT forwarder. The shell
/// arms a timer for `syncDue` and calls `syncIfDue` when it fires.
public final class TrackRecorder {
    public typealias LogLevel = AklocCore.LogLevel

    public let settings: TrackSettings
    public let store: TrackStore
    private var segmenter: TrackSegmenter
    private let log: (LogLevel, String) -> Void
    private let wallClock: () -> FixTime
    /// When the points appended since the last sync must be on the disk.
    public private(set) var syncDue: Instant?
    public private(set) var recorded: UInt64 = 0
    /// Sees each point once it is in the journal (the daemon logs it at
    /// debug level, so a test can check every one comes back).
    public var onRecord: ((TrackPoint) -> Void)?
    private var started = false
    private var failing = false
    /// Whether the first fix without a time was logged (once a run: a
    /// receiver that never gives gpsd a date records nothing, and says so).
    private var loggedUntimed = false

    public init(
        settings: TrackSettings, directory: String, log: @escaping (LogLevel, String) -> Void,
        wallClock: @escaping () -> FixTime
    ) {
        self.settings = settings
        store = TrackStore(
            directory: directory,
            limits: TrackStore.Limits(retentionDays: settings.retentionDays, maxSize: settings.maxSize), log: log)
        segmenter = TrackSegmenter(after: nil, gap: settings.segmentGap)
        self.log = log
        self.wallClock = wallClock
    }

    /// Opens the store; the segment numbers go on from the last point recorded.
    public func open() throws(TrackError) {
        do {
            let last = try store.open(now: wallClock())
            segmenter = TrackSegmenter(after: last?.segment, gap: settings.segmentGap)
        } catch {
            throw TrackError(.storageFailed, "cannot open the track in \(store.directory): \(error)")
        }
        started = true
    }

    /// Syncs what is pending and closes the day file.
    public func close() {
        guard started else { return }
        started = false
        sync()
        store.close()
        syncDue = nil
    }

    /// One engine event for the recorder's subscriber, received at `now`.
    public func handle(_ event: Engine.Event, at now: Instant) {
        guard started else { return }
        switch event {
        case .didUpdateLocation(let location, let after):
            // The track is on the receiver's clock: a fix without the
            // receiver's time (gpsd's first ones, before a sentence gave it
            // the date) has no place on it, and dating it by its receipt
            // would mix two clocks in one segment (docs/track.md). It is no
            // epoch for the segmenter either, so it neither starts nor
            // extends a segment.
            guard location.timestamp != nil else {
                if !loggedUntimed {
                    loggedUntimed = true
                    log(.info, "track: fixes without the receiver's time are not recorded (gpsd has no date yet)")
                }
                return
            }
            guard case .record(let segment) = segmenter.epoch(throttled: after != nil, at: now) else { return }
            record(TrackPoint(location: location, segment: segment), at: now)
        case .didGetNotification(.paused), .didGetNotification(.sourceDisconnected),
            .didGetNotification(.daemonStopping):
            segmenter.interrupt()
        default:
            break
        }
    }

    private func record(_ point: TrackPoint, at now: Instant) {
        var point = point
        if point.location.receivedAt == nil { point.location.receivedAt = wallClock() }
        do {
            if try store.append(point, now: wallClock()) {
                recorded += 1
                onRecord?(point)
            }
            if failing {
                failing = false
                log(.notice, "track: recording again")
            }
        } catch {
            if !failing { log(.error, "track: cannot record a point (will keep trying): \(error)") }
            failing = true
            return
        }
        if syncDue == nil { syncDue = now.advanced(bySeconds: settings.syncInterval) }
    }

    /// The sync timer fired: syncs when it is time.
    public func syncIfDue(at now: Instant) {
        guard let due = syncDue, now >= due else { return }
        sync()
    }

    private func sync() {
        syncDue = nil
        do {
            try store.sync()
        } catch {
            log(.error, "track: cannot sync the journal: \(error)")
        }
    }

    /// The whole `track` reply for `query`: at most `limit` points, and
    /// fewer when the reply would pass `byteBudget` (it must fit in the
    /// client's queue); `next` says where the following page starts.
    public func reply(to query: TrackQuery, id: RequestID?, byteBudget: Int) -> Result<[UInt8], ProtocolError> {
        let now = wallClock()
        let until = query.until ?? now
        let since =
            query.since
            ?? FixTime(
                secondsSince1970: max(0, until.secondsSince1970 - TrackQuery.defaultSpan),
                nanoseconds: until.nanoseconds)
        guard since <= until else {
            return .failure(
                ProtocolError(.badRequest, "\"since\" (\(since)) is after \"until\" (\(until), now by default)", id: id)
            )
        }
        var cursor: TrackCursor?
        if let text = query.after {
            guard let parsed = TrackCursor(text: text) else {
                return .failure(ProtocolError(.badRequest, "\"after\" is not a cursor this daemon made", id: id))
            }
            cursor = parsed
        }
        let page: TrackStore.Page
        do {
            // No point is written in fewer than about 80 bytes, so reading more
            // than this many could only be thrown away at the budget.
            page = try store.page(
                since: since, until: until, after: cursor, limit: min(query.limit, max(1, byteBudget / 80)))
        } catch {
            switch error.code {
            case .badCursor: return .failure(ProtocolError(.badRequest, "\"after\": \(error.message)", id: id))
            case .storageFailed, .badImport: return .failure(ProtocolError(.internalError, error.message, id: id))
            }
        }
        let kept = query.simplify.map { Self.simplified(page.points.map(\.point), tolerance: $0) }
        let candidates = page.points.indices.filter { kept?[$0] ?? true }.map { page.points[$0] }
        let reply = ServerEncoder.trackReply(
            id: id, points: candidates.map(\.point), next: page.more ? page.points.last?.next.text : nil,
            byteBudget: byteBudget, cursorAfter: { candidates[$0].next.text })
        return .success(reply)
    }

    /// Douglas–Peucker per segment run: which of `points` to keep.
    static func simplified(_ points: [TrackPoint], tolerance: Double) -> [Bool] {
        var kept: [Bool] = []
        kept.reserveCapacity(points.count)
        var start = 0
        while start < points.count {
            var end = start
            while end + 1 < points.count, points[end + 1].segment == points[start].segment { end += 1 }
            let run = points[start...end]
            kept += DouglasPeucker.keep(
                latitudes: run.map(\.location.latitude), longitudes: run.map(\.location.longitude),
                tolerance: tolerance)
            start = end + 1
        }
        return kept
    }

    /// A block of `count` segment numbers for an import, the first
    /// returned; the live recording goes on after them in a new segment.
    public func reserveSegments(_ count: Int) -> UInt64 {
        let first = segmenter.nextSegment
        segmenter.skip(past: first &+ UInt64(max(1, count)))
        return first
    }

    /// `clearTrack`: forgets points received before `before` (all when nil).
    public func clear(before: FixTime?) throws(TrackError) {
        do {
            try store.sync()
            let changed = try store.clear(before: before)
            log(
                .notice,
                "track: cleared \(before.map { "points before \($0)" } ?? "every point") (\(changed) day file(s))")
        } catch {
            throw TrackError(.storageFailed, "cannot clear the track in \(store.directory): \(error)")
        }
    }
}
