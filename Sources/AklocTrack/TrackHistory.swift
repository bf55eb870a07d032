import AklocCore
import AklocProtocol

/// The recorded track as other features read it (the timeline, DESIGN §15):
/// the points of a range in recording order, a page at a time so a month of
/// them never sits in memory at once, and each point as it is recorded.
/// The track feature posts it once its journal is open.
///
/// Confinement: the daemon's queue, as the recorder.
public final class TrackHistory {
    private let store: TrackStore
    private var listeners: [(TrackPoint) -> Void] = []
    /// Points read per page.
    static let pageSize = 4096

    init(store: TrackStore) {
        self.store = store
    }

    /// `listener` hears every point once it is in the journal.
    public func onRecord(_ listener: @escaping (TrackPoint) -> Void) {
        listeners.append(listener)
    }

    func recorded(_ point: TrackPoint) {
        for listener in listeners { listener(point) }
    }

    /// Every point received in `since...until`, in recording order, until
    /// `body` returns false.
    public func forEach(since: FixTime, until: FixTime, _ body: (TrackPoint) -> Bool) throws(TrackError) {
        var cursor: TrackCursor?
        while true {
            let page = try store.page(since: since, until: until, after: cursor, limit: Self.pageSize)
            for (point, _) in page.points where !body(point) { return }
            guard page.more, let last = page.points.last else { return }
            cursor = last.next
        }
    }
}
