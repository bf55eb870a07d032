/// The visits and trips of a run of fixes, in order: the detector's events
/// collected, with the visit or trip under way at the end. The history ops
/// and the live feature's priming run this over the track journal.
public struct TimelineBuilder: Sendable {
    public private(set) var detector: VisitDetector
    /// Visits in arrival order; each departed one has its departure.
    public private(set) var visits: [DetectedVisit] = []
    /// Trips that reached a visit, in order.
    public private(set) var trips: [TripSummary] = []
    /// Arrivals, departures and trips completed so far.
    public private(set) var events = 0

    public init(settings: TimelineSettings) {
        detector = VisitDetector(settings: settings)
    }

    public mutating func add(_ fix: TimelineFix) {
        for event in detector.add(fix) {
            events += 1
            switch event {
            case .arrived(let visit): visits.append(visit)
            case .departed(let visit):
                if let index = visits.lastIndex(where: { $0.arrival == visit.arrival }) { visits[index] = visit }
            case .tripEnded(let trip): trips.append(trip)
            }
        }
    }

    /// Visits with the one under way as it stands now (its centre from
    /// every fix so far), and trips with the one under way.
    public var result: (visits: [DetectedVisit], trips: [TripSummary]) {
        var visits = visits
        if let current = detector.currentVisit, let index = visits.lastIndex(where: { $0.arrival == current.arrival }) {
            visits[index] = current
        }
        var trips = trips
        if let current = detector.currentTrip, current.end > current.start { trips.append(current) }
        return (visits, trips)
    }
}
