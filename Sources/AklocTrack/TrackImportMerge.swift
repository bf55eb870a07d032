import AklocCore
import AklocProtocol

/// The pure part of a track import (docs/track.md, "Importing"): one day's
/// journal records and the points imported into that day become the day's
/// new records. A point already there (the same time to the millisecond and
/// the same position to 1e-7°, Google's precision) is skipped and counted,
/// as is a second copy within the import. The journal's order rule holds:
/// the day's records stay in their order and each imported point goes in
/// by when it was received, which for an imported point is its own time.
public enum TrackImportMerge {
    public struct Key: Hashable, Sendable {
        var milliseconds: Int64
        var latitude: Int64
        var longitude: Int64
    }

    public struct Result: Hashable, Sendable {
        /// The day's records, without a header (the caller writes a new one:
        /// a rewritten file is a new incarnation, so old cursors are refused).
        public var records: [[UInt8]]
        public var imported = 0
        public var skipped = 0
    }

    /// A point's identity for "already in the track": its own time (the
    /// receiver's, else when received) and its position.
    public static func key(_ location: Location) -> Key {
        let time = location.timestamp ?? location.receivedAt ?? FixTime(secondsSince1970: 0)
        return Key(
            milliseconds: time.secondsSince1970 * 1000 + Int64(time.nanoseconds / 1_000_000),
            latitude: Int64((location.latitude * 1e7).rounded()), longitude: Int64((location.longitude * 1e7).rounded())
        )
    }

    /// `existing`: the day file's records in file order (its header left
    /// out or skipped here); `staged`: the imported points of the day, in
    /// any order, each with the file's own segment number.
    public static func merge(existing: [[UInt8]], staged: [TrackPoint], segmenter: inout ImportSegmenter) -> Result {
        var keys = Set<Key>()
        // Each existing record with the receipt time it sorts by; a record
        // this version cannot read keeps its place after the one before it.
        var old: [(record: [UInt8], receivedAt: FixTime)] = []
        old.reserveCapacity(existing.count)
        var previous = FixTime(secondsSince1970: 0)
        for record in existing where TrackRecord.headerID(record) == nil {
            if let point = TrackRecord.decode(record) {
                keys.insert(key(point.location))
                previous = point.location.receivedAt ?? previous
            }
            old.append((record, previous))
        }
        let ordered = staged.enumerated().sorted {
            let (a, b) = ($0.element.location.receivedAt!, $1.element.location.receivedAt!)
            return a != b ? a < b : $0.offset < $1.offset
        }
        var result = Result(records: [])
        var new: [TrackPoint] = []
        new.reserveCapacity(ordered.count)
        for (_, point) in ordered {
            guard keys.insert(key(point.location)).inserted else {
                result.skipped += 1
                continue
            }
            var kept = point
            kept.segment = segmenter.segment(for: point)
            new.append(kept)
        }
        result.imported = new.count
        result.records.reserveCapacity(old.count + new.count)
        var index = 0
        for (record, receivedAt) in old {
            while index < new.count, new[index].location.receivedAt! < receivedAt {
                result.records.append(TrackRecord.encode(new[index]))
                index += 1
            }
            result.records.append(record)
        }
        while index < new.count {
            result.records.append(TrackRecord.encode(new[index]))
            index += 1
        }
        return result
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
    private var last: (time: FixTime, fileSegment: UInt64, segment: UInt64)?

    public init(first: UInt64, limit: UInt64, gap: Double = 600) {
        next = first
        self.limit = limit
        self.gap = gap
    }

    /// The segment of `point` (its `segment` is the file's), taken in time order.
    public mutating func segment(for point: TrackPoint) -> UInt64 {
        let time = point.location.receivedAt!
        if let last, last.fileSegment == point.segment, Self.seconds(from: last.time, to: time) <= gap {
            self.last = (time, point.segment, last.segment)
            return last.segment
        }
        // The block holds one number per staged point, so it never runs out.
        let segment = min(next, limit)
        next = segment &+ 1
        last = (time, point.segment, segment)
        return segment
    }

    private static func seconds(from earlier: FixTime, to later: FixTime) -> Double {
        Double(later.secondsSince1970 - earlier.secondsSince1970)
            + Double(later.nanoseconds - earlier.nanoseconds) / 1e9
    }
}
