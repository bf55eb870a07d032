import AklocCore
import AklocProtocol

/// The pure part of a track import (docs/track.md, "Importing"): one day's
/// journal records and the points imported into that day become the day's
/// new records. A point already there (the same time to the millisecond and
/// the same position to 1e-7°, Google's precision) is skipped and counted,
/// as is a second copy within the import. The journal's order rule holds:
/// the day's records stay in their order and each imported point goes in
/// by when it was received, which for an imported point is its own time.
///
/// Two passes over the day file, so that only the imported points and the
/// keys of the day are held, never the file: `see` each existing record,
/// `take` the imported points, then `emit` each existing record again (the
/// new ones due before it come first) and `finish`.
public struct TrackImportMerge {
    public struct Key: Hashable, Sendable {
        var milliseconds: Int64
        var latitude: Int64
        var longitude: Int64
    }

    private var keys = Set<Key>()
    /// The imported points to write, in time order, and their segments.
    private var new: [ImportPoint] = []
    private var segments: [UInt64] = []
    private var next = 0
    /// The receipt time of the last existing record emitted (a record this
    /// version cannot read keeps its place after the one before it).
    private var lastReceived = FixTime(secondsSince1970: 0)
    public private(set) var imported = 0
    public private(set) var skipped = 0

    public init() {}

    /// A point's identity for "already in the track": its own time (the
    /// receiver's, else when received) and its position.
    public static func key(time: FixTime, latitude: Double, longitude: Double) -> Key {
        Key(
            milliseconds: time.secondsSince1970 * 1000 + Int64(time.nanoseconds / 1_000_000),
            latitude: Int64((latitude * 1e7).rounded()), longitude: Int64((longitude * 1e7).rounded()))
    }

    /// Pass 1: a record of the day file.
    public mutating func see(existing record: some Collection<UInt8>) {
        guard let point = TrackRecord.decode(Array(record)) else { return }
        let location = point.location
        let time = location.timestamp ?? location.receivedAt ?? FixTime(secondsSince1970: 0)
        keys.insert(Self.key(time: time, latitude: location.latitude, longitude: location.longitude))
    }

    /// The imported points of the day, in any order, each with the file's
    /// own segment: those not already there, in time order, with segments.
    public mutating func take(_ staged: [ImportPoint], segmenter: inout ImportSegmenter) {
        new = staged.sorted { $0.time < $1.time }
        var kept = 0
        for index in new.indices {
            let point = new[index]
            guard keys.insert(Self.key(time: point.time, latitude: point.latitude, longitude: point.longitude)).inserted
            else {
                skipped += 1
                continue
            }
            new[kept] = point
            segments.append(segmenter.segment(for: point))
            kept += 1
        }
        new.removeLast(new.count - kept)
        imported = kept
        keys = []
    }

    /// Imported points not written yet.
    public var pending: Int { new.count - next }

    /// Pass 2: where a record of the day file sorts (its receipt time, or
    /// the one before it for a record this version cannot read); nil for
    /// the file's header, which the new file replaces.
    public mutating func receiptTime(of record: [UInt8]) -> FixTime? {
        if TrackRecord.headerID(record) != nil { return nil }
        if let received = TrackRecord.decode(record)?.location.receivedAt { lastReceived = received }
        return lastReceived
    }

    /// Writes the imported points received before `time` (all when nil),
    /// at most `limit`; true when none due before it is left.
    public mutating func emitNew(before time: FixTime?, limit: Int, into out: inout [[UInt8]]) -> Bool {
        var written = 0
        while next < new.count, time.map({ new[next].time < $0 }) ?? true {
            guard written < limit else { return false }
            emitNew(into: &out)
            written += 1
        }
        return true
    }

    /// Pass 2: a record of the day file, appended to `out` after the
    /// imported points received before it.
    public mutating func emit(existing record: some Collection<UInt8>, into out: inout [[UInt8]]) {
        let bytes = Array(record)
        guard let time = receiptTime(of: bytes) else { return }
        _ = emitNew(before: time, limit: .max, into: &out)
        out.append(bytes)
    }

    /// The imported points after the day file's last record.
    public mutating func finish(into out: inout [[UInt8]]) {
        _ = emitNew(before: nil, limit: .max, into: &out)
    }

    private mutating func emitNew(into out: inout [[UInt8]]) {
        let point = new[next]
        let location = Location(
            latitude: point.latitude, longitude: point.longitude, mode: point.altitude == nil ? .twoD : .threeD,
            altitude: point.altitude, horizontalAccuracy: point.horizontalAccuracy, timestamp: point.time,
            receivedAt: point.time, device: "import")
        out.append(TrackRecord.encode(TrackPoint(location: location, segment: segments[next])))
        next += 1
    }

    /// The whole merge of records held in memory (tests, small days).
    public static func merge(existing: [[UInt8]], staged: [ImportPoint], segmenter: inout ImportSegmenter) -> (
        records: [[UInt8]], imported: Int, skipped: Int
    ) {
        var merge = TrackImportMerge()
        for record in existing { merge.see(existing: record) }
        merge.take(staged, segmenter: &segmenter)
        var out: [[UInt8]] = []
        for record in existing { merge.emit(existing: record, into: &out) }
        merge.finish(into: &out)
        return (out, merge.imported, merge.skipped)
    }
}

/// Segments of imported points, numbered from a block the recorder
/// reserved for the import: a new segment where the file starts one (a
/// GPX `trkseg`) or after more than `gap` seconds without a point (Google's
/// exports have no segments; their points come every few minutes while
/// moving, so the recorder's own 60 s would make each point one).
public struct ImportSegmenter: Sendable {
    public private(set) var next: UInt64
    public let limit: UInt64
    public let gap: Double
    private var last: (time: FixTime, fileSegment: Int64, segment: UInt64)?

    public init(first: UInt64, limit: UInt64, gap: Double = 600) {
        next = first
        self.limit = limit
        self.gap = gap
    }

    /// The segment of `point` (its `segment` is the file's), taken in time order.
    public mutating func segment(for point: ImportPoint) -> UInt64 {
        if let last, last.fileSegment == point.segment, Self.seconds(from: last.time, to: point.time) <= gap {
            self.last = (point.time, point.segment, last.segment)
            return last.segment
        }
        // The block holds one number per staged point, so it never runs out.
        let segment = min(next, limit)
        next = segment &+ 1
        last = (point.time, point.segment, segment)
        return segment
    }

    private static func seconds(from earlier: FixTime, to later: FixTime) -> Double {
        Double(later.secondsSince1970 - earlier.secondsSince1970)
            + Double(later.nanoseconds - earlier.nanoseconds) / 1e9
    }
}
