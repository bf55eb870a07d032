/// Finds visits and the trips between them in a stream of fixes (DESIGN
/// §15), pure and on the fixes' own time: the live feature and the history
/// run the same detector over the same fixes, so they find the same visits.
///
/// - A visit begins when fixes stay within `radius` of the first of them
///   for `minimumTime`, timed to the first fix that leaves (the stay point
///   of Li et al. 2008 as trackintel's `sliding` method computes it: the
///   window starts again at the first fix beyond the radius of its first).
///   Its arrival is that first fix. A way out after a gap times nothing.
/// - It ends when the fixes leave for good: at least three fixes in a row
///   beyond the radius of its centre or of its first fix, that either go
///   beyond twice the radius or stay out for `minimumTime`. Its departure
///   is then the last fix inside. Fewer, or a return inside first, were a
///   wild fix or jitter: dropped, so they neither end the visit nor make a
///   trip.
/// - A gap in the fixes changes nothing by itself: fixes inside the radius
///   after it continue the visit; fixes far away after it end it, and the
///   trip that follows has `unknownPath`.
/// - A fix whose accuracy is worse than the radius says nothing about being
///   in or out and is ignored; the others weigh the centre by their accuracy.
public struct VisitDetector: Sendable {
    public let settings: TimelineSettings

    /// Fixes outside a visit's radius since its last fix inside.
    struct Excursion: Hashable, Sendable {
        var fixes: [TimelineFix] = []
        var farthest = 0.0
    }

    /// Fixes that may become a visit: each within the radius of the first.
    struct Travel: Sendable {
        var candidate: [TimelineFix]
        /// The trip under way; nil only before the first fix has left a candidate.
        var trip: TripLeg?
        /// Arrival of the visit left last.
        var from: Double?
    }

    enum State: Sendable {
        case empty
        case travelling(Travel)
        case visiting(Stay, Excursion)
    }

    public enum Event: Sendable {
        /// A visit began (no departure yet).
        case arrived(DetectedVisit)
        /// The same visit, with its departure.
        case departed(DetectedVisit)
        /// A trip reached a visit (`to` is that visit's arrival).
        case tripEnded(TripSummary)
    }

    private(set) var state: State = .empty
    /// The newest fix taken: older ones are out of order and ignored.
    private(set) var lastTime: Double = -.infinity
    public private(set) var ignoredFixes = 0

    public init(settings: TimelineSettings = TimelineSettings()) {
        self.settings = settings
    }

    /// The visit under way, as it stands.
    public var currentVisit: DetectedVisit? {
        guard case .visiting(let stay, _) = state else { return nil }
        return DetectedVisit(stay, departed: false)
    }

    /// The trip under way, ending at its newest fix (nil at a visit or before
    /// any movement).
    public var currentTrip: TripSummary? {
        guard case .travelling(let travel) = state, var trip = travel.trip else { return nil }
        // The candidate's fixes are part of it until they become a visit.
        for fix in travel.candidate { trip.add(fix) }
        return trip.summary
    }

    /// Takes one fix; returns what it completed, in order.
    public mutating func add(_ fix: TimelineFix) -> [Event] {
        guard fix.time.isFinite, fix.time > lastTime, abs(fix.latitude) <= 90, abs(fix.longitude) <= 180 else {
            ignoredFixes += 1
            return []
        }
        lastTime = fix.time
        if let accuracy = fix.accuracy, accuracy > settings.radius {
            ignoredFixes += 1
            return []
        }
        var events: [Event] = []
        step(fix, &events)
        return events
    }

    private mutating func step(_ fix: TimelineFix, _ events: inout [Event]) {
        switch state {
        case .empty:
            state = .travelling(Travel(candidate: [fix], trip: nil, from: nil))
            settle(&events)
        case .travelling(var travel):
            state = .empty
            travel.candidate.append(fix)
            state = .travelling(travel)
            settle(&events)
        case .visiting(var stay, var excursion):
            state = .empty
            // Beyond the radius of the first fix is out too, as for
            // trackintel; the centre alone would keep a walker who leaves on
            // the far side from where they came for another 100 m.
            let distance = stay.distanceFromCentre(fix)
            if distance <= settings.radius, stay.distanceFromArrival(fix) <= settings.radius {
                // Back inside before leaving for good: the excursion was noise.
                stay.add(fix)
                state = .visiting(stay, Excursion())
                return
            }
            excursion.fixes.append(fix)
            excursion.farthest = max(excursion.farthest, distance)
            let span = fix.time - excursion.fixes[0].time
            guard excursion.fixes.count >= 3,
                excursion.farthest > 2 * settings.radius || span >= settings.minimumTime
            else {
                state = .visiting(stay, excursion)
                return
            }
            let visit = DetectedVisit(stay, departed: true)
            events.append(.departed(visit))
            state = .travelling(
                Travel(candidate: [], trip: TripLeg(start: stay.lastInside, from: visit.arrival), from: visit.arrival))
            for later in excursion.fixes { step(later, &events) }
        }
    }

    /// Makes a visit of the candidate once its fixes, each within the radius
    /// of the first, span `minimumTime`. A fix beyond the radius ends the
    /// candidate: if it came `minimumTime` after the first, without a gap
    /// before it, the candidate was a visit and this fix its first step out
    /// (Li et al. and trackintel time a stay to the fix that leaves it);
    /// otherwise the candidate joins the trip and this fix begins the next
    /// (the window jumps to it, as trackintel's does).
    private mutating func settle(_ events: inout [Event]) {
        guard case .travelling(var travel) = state else { return }
        state = .empty
        if let anchor = travel.candidate.first, let newest = travel.candidate.last,
            anchor.distance(to: newest) > settings.radius
        {
            travel.candidate.removeLast()
            if let last = travel.candidate.last, newest.time - anchor.time >= settings.minimumTime,
                newest.time - last.time <= TripLeg.gap
            {
                arrive(travel, &events)
                step(newest, &events)
                return
            }
            for fix in travel.candidate {
                if travel.trip == nil {
                    travel.trip = TripLeg(start: fix, from: nil)
                } else {
                    travel.trip!.add(fix)
                }
            }
            travel.candidate = [newest]
        }
        guard let anchor = travel.candidate.first, let newest = travel.candidate.last,
            newest.time - anchor.time >= settings.minimumTime
        else {
            state = .travelling(travel)
            return
        }
        arrive(travel, &events)
    }

    /// Ends the trip at the candidate's first fix and makes the candidate a visit.
    private mutating func arrive(_ travel: Travel, _ events: inout [Event]) {
        guard let anchor = travel.candidate.first else { return }
        if var trip = travel.trip {
            trip.add(anchor)
            var summary = trip.summary
            summary.to = anchor.time
            events.append(.tripEnded(summary))
        }
        var stay = Stay(first: anchor)
        for fix in travel.candidate { stay.add(fix) }
        events.append(.arrived(DetectedVisit(stay, departed: false)))
        state = .visiting(stay, Excursion())
    }
}
