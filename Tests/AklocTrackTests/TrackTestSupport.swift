import AklocCore
import AklocProtocol
import AklocTestSupport
import AklocTrack
import Glibc

/// A fresh directory for one test, removed afterwards.
final class TrackScratch {
    let path = TestSockets.temporaryDirectory()
    var logs: [(LogLevel, String)] = []

    deinit { _ = system("rm -rf '\(path)'") }

    var directory: String { path + "/track" }

    func store(retentionDays: Int = 30, maxSize: Int = 64 << 20) -> TrackStore {
        TrackStore(
            directory: directory, limits: TrackStore.Limits(retentionDays: retentionDays, maxSize: maxSize),
            log: { [weak self] level, message in self?.logs.append((level, message)) })
    }

    func write(_ name: String, _ bytes: [UInt8]) {
        let fd = open(directory + "/" + name, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        precondition(fd >= 0)
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}

/// 2025-12-01T00:00:00Z, a day number the tests count from.
let dayOne = FixTime(secondsSince1970: 1_764_547_200)

func at(_ seconds: Int64, from start: FixTime = dayOne) -> FixTime {
    FixTime(secondsSince1970: start.secondsSince1970 + seconds)
}

/// A point received `seconds` after `dayOne`, moving east.
func point(_ seconds: Int64, segment: UInt64 = 1, index: Int = 0) -> TrackPoint {
    var location = Location(
        latitude: 52.5, longitude: 13.4 + Double(index) * 0.0001, altitude: 30 + Double(index % 7),
        horizontalAccuracy: 3.5, speed: 1.25, course: 90)
    location.timestamp = at(seconds)
    location.receivedAt = at(seconds)
    return TrackPoint(location: location, segment: segment)
}

extension TrackStore {
    /// Every point in the window, page by page, following the cursors.
    func all(since: FixTime = FixTime(secondsSince1970: 0), until: FixTime = at(400 * 86_400), limit: Int = 7)
        throws(TrackError) -> [TrackPoint]
    {
        var points: [TrackPoint] = []
        var cursor: TrackCursor?
        while true {
            let page = try page(since: since, until: until, after: cursor, limit: limit)
            points += page.points.map(\.point)
            guard page.more else { return points }
            cursor = page.points.last?.next
        }
    }
}
