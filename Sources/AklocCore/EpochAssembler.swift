/// Turns gpsd's TPVs into epochs: the one owner of "at most one location per
/// epoch" (DESIGN §2, docs/semantics.md "Epochs").
///
/// gpsd sends a TPV for each sentence of a cycle that reports, all with the
/// epoch's `time`; gpsd 3.22 splits a typical NMEA epoch into a first TPV
/// without track and with a speed it estimated from position changes, then
/// the receiver's own speed and track. So an epoch's TPVs are merged (a later
/// TPV's fields override, absent ones are kept) and the epoch is delivered
/// once it is complete:
/// - once the device's shape is known: as many TPVs as its previous epoch
///   had, and every field it ended with (learned per device, the way gpsd
///   itself learns a cycle's last sentence); a receiver with one TPV per
///   epoch is delivered on its first TPV, with no wait;
/// - else when the next epoch's first TPV, a no-fix report or the loss of the
///   source closes it. Until two consecutive whole epochs of a device have
///   had the same shape, this is the only way: gpsd's first epochs after it
///   opens a device are not the shape of the later ones (before it has
///   learned the cycle's last sentence every sentence that moves the fix
///   gives a TPV, and it learns more of them as the cycle shows them), so a
///   shape learned from them is too small and would deliver an epoch before
///   the receiver's own speed and track. The shapes are learned anew each
///   time the watch starts or gpsd reconnects (`forgetShapes`);
/// - else `wait` seconds after its first TPV (1.5 s: longer than a 1 Hz
///   receiver's cycle, so such an epoch is closed by its own TPVs or the
///   next epoch, and the bound only matters when the receiver goes quiet).
/// TPVs of an epoch that come after its delivery refine it (for `get`) and
/// teach the shape of the next one, but are never delivered again.
///
/// Times are monotonic receipt instants; the fix time only tells epochs apart.
public struct EpochAssembler: Hashable, Sendable {
    /// One epoch's TPVs merged.
    public struct Epoch: Hashable, Sendable {
        public var fix: Location
        /// Receipt of its first TPV: the epoch's receipt for throttling.
        public var receivedAt: Instant
        /// TPVs merged into it.
        public var reports: Int

        public init(fix: Location, receivedAt: Instant, reports: Int = 1) {
            self.fix = fix
            self.receivedAt = receivedAt
            self.reports = reports
        }
    }

    /// What one TPV does.
    public struct Step: Hashable, Sendable {
        /// The previous epoch, closed by this TPV before it was complete: deliver it first.
        public var closed: Epoch?
        /// This TPV's epoch, when this TPV completed it: deliver it.
        public var completed: Epoch?
        /// This TPV's epoch after a merge, when it had already been delivered.
        public var refined: Epoch?
        /// This TPV began an epoch that waits for the rest (its deadline is new).
        public var began = false

        public init(closed: Epoch? = nil, completed: Epoch? = nil, refined: Epoch? = nil, began: Bool = false) {
            self.closed = closed
            self.completed = completed
            self.refined = refined
            self.began = began
        }

        /// Whether the TPV only joined its epoch: nothing to deliver, no new deadline.
        public var onlyJoined: Bool { closed == nil && completed == nil && !began }
    }

    /// Which optional fields a merged fix has, and whether it is 3D.
    struct Fields: OptionSet, Hashable, Sendable {
        var rawValue: UInt16

        static let altitude = Fields(rawValue: 1 << 0)
        static let ellipsoidalAltitude = Fields(rawValue: 1 << 1)
        static let horizontalAccuracy = Fields(rawValue: 1 << 2)
        static let verticalAccuracy = Fields(rawValue: 1 << 3)
        static let speed = Fields(rawValue: 1 << 4)
        static let speedAccuracy = Fields(rawValue: 1 << 5)
        static let course = Fields(rawValue: 1 << 6)
        static let courseAccuracy = Fields(rawValue: 1 << 7)
        static let climb = Fields(rawValue: 1 << 8)
        static let threeD = Fields(rawValue: 1 << 9)

        init(rawValue: UInt16) { self.rawValue = rawValue }

        init(_ fix: Location) {
            var fields: Fields = []
            if fix.altitude != nil { fields.insert(.altitude) }
            if fix.ellipsoidalAltitude != nil { fields.insert(.ellipsoidalAltitude) }
            if fix.horizontalAccuracy != nil { fields.insert(.horizontalAccuracy) }
            if fix.verticalAccuracy != nil { fields.insert(.verticalAccuracy) }
            if fix.speed != nil { fields.insert(.speed) }
            if fix.speedAccuracy != nil { fields.insert(.speedAccuracy) }
            if fix.course != nil { fields.insert(.course) }
            if fix.courseAccuracy != nil { fields.insert(.courseAccuracy) }
            if fix.climb != nil { fields.insert(.climb) }
            if fix.mode == .threeD { fields.insert(.threeD) }
            self = fields
        }
    }

    /// What a device's finished epochs looked like.
    struct Shape: Hashable, Sendable {
        var reports: Int
        var fields: Fields
    }

    /// What is known of one device's epochs.
    enum Knowledge: Hashable, Sendable {
        /// Not yet: an epoch goes out only once it has ended. `last` is the
        /// shape of the last epoch that ended, if one did.
        case learning(last: Shape?)
        /// Two consecutive epochs ended with the same shape; `shape` is what
        /// the next epoch must reach. It grows with any epoch that ends
        /// larger, but shrinks only when two consecutive epochs end with
        /// the same smaller shape (`smaller`, the first of them): one short
        /// epoch (a sentence the receiver skipped once) would otherwise
        /// deliver the next one before its last TPV.
        case known(Shape, smaller: Shape?)
    }

    enum State: Hashable, Sendable {
        case idle
        /// TPVs of an epoch that is not complete yet; delivered at `deadline`
        /// at the latest. `expected` is its device's shape, looked up once
        /// at its first TPV (shapes change only when an epoch ends).
        case collecting(Epoch, deadline: Instant, expected: Shape?)
        /// Delivered; later TPVs of the same epoch only refine it.
        case delivered(Epoch)
    }

    /// The longest an epoch waits for the rest of its TPVs, seconds.
    public var wait: Double
    private(set) var state: State = .idle
    /// What each device's finished epochs looked like.
    private var devices: [String: Knowledge] = [:]

    public init(wait: Double = 1.5) {
        self.wait = wait
    }

    /// When the epoch being collected must be delivered, if one is.
    public var deadline: Instant? {
        if case .collecting(_, let deadline, _) = state { return deadline }
        return nil
    }

    /// Takes one TPV with a fix, received at `now`.
    public mutating func offer(_ fix: Location, at now: Instant) -> Step {
        var step = Step()
        // The epoch is taken out of `state` (left idle meanwhile) and put
        // back, so it is merged in place: this runs for every TPV.
        switch state {
        case .collecting(var epoch, let deadline, let expected) where Self.sameEpoch(epoch.fix, fix):
            state = .idle
            Self.merge(fix, into: &epoch)
            if Self.isComplete(epoch, expected) {
                step.completed = epoch
                state = .delivered(epoch)
            } else {
                state = .collecting(epoch, deadline: deadline, expected: expected)
            }
            return step
        case .delivered(var epoch) where Self.sameEpoch(epoch.fix, fix):
            state = .idle
            Self.merge(fix, into: &epoch)
            step.refined = epoch
            state = .delivered(epoch)
            return step
        default:
            step.closed = close()
        }
        let epoch = Epoch(fix: fix, receivedAt: now)
        var expected: Shape?
        if case .known(let shape, _) = devices[fix.device ?? ""] { expected = shape }
        if fix.timestamp == nil || Self.isComplete(epoch, expected) {
            // Without a time nothing can join it: it is its own epoch.
            state = .delivered(epoch)
            step.completed = epoch
        } else {
            state = .collecting(epoch, deadline: now.advanced(bySeconds: wait), expected: expected)
            step.began = true
        }
        return step
    }

    /// The epoch whose wait ran out by `now`, to deliver.
    public mutating func expire(at now: Instant) -> Epoch? {
        guard case .collecting(let epoch, let deadline, _) = state, deadline <= now else { return nil }
        state = .delivered(epoch)
        return epoch
    }

    /// Ends the current epoch (a no-fix report, the source gone): returns it
    /// if it still has to be delivered. What devices' epochs look like is
    /// kept until `forgetShapes`.
    public mutating func close() -> Epoch? {
        let pending: Epoch?
        switch state {
        case .idle:
            return nil
        case .collecting(let epoch, _, _):
            learn(epoch)
            pending = epoch
        case .delivered(let epoch):
            learn(epoch)
            pending = nil
        }
        state = .idle
        return pending
    }

    /// Forgets every device's shape, to be learned again from whole epochs
    /// before any is delivered on one: when the watch starts or gpsd
    /// reconnects, gpsd may have (re)opened the device, and its first
    /// epochs then have another shape.
    public mutating func forgetShapes() {
        devices = [:]
    }

    /// Whether a device's shape is known (`forgetShapes` unlearns it).
    public func knowsShape(of device: String?) -> Bool {
        if case .known = devices[device ?? ""] { return true }
        return false
    }

    /// Whether `epoch` reached its device's known shape.
    private static func isComplete(_ epoch: Epoch, _ expected: Shape?) -> Bool {
        // A device whose shape is not known waits for its epoch to end: its
        // first TPV may be gpsd's estimate (or, on some receivers, carry the
        // previous epoch's position).
        guard let expected else { return false }
        return epoch.reports >= expected.reports && Fields(epoch.fix).isSuperset(of: expected.fields)
    }

    /// Records what one finished epoch of its device looked like.
    mutating func learn(_ epoch: Epoch) {
        // A time-less fix is always alone: it says nothing about the cycle.
        guard epoch.fix.timestamp != nil else { return }
        let device = epoch.fix.device ?? ""
        let shape = Shape(reports: epoch.reports, fields: Fields(epoch.fix))
        switch devices[device] {
        case .known(let known, let smaller):
            if shape.reports >= known.reports && shape.fields.isSuperset(of: known.fields) {
                devices[device] = .known(shape, smaller: nil)
            } else if smaller == shape {
                devices[device] = .known(shape, smaller: nil)
            } else {
                devices[device] = .known(known, smaller: shape)
            }
        case .learning(let last?) where last == shape:
            devices[device] = .known(shape, smaller: nil)
        case .learning, nil:
            devices[device] = .learning(last: shape)
        }
    }

    static func sameEpoch(_ a: Location, _ b: Location) -> Bool {
        a.timestamp != nil && a.timestamp == b.timestamp && a.device == b.device
    }

    /// gpsd's later TPV of an epoch carries what it knows by then: its
    /// fields win, and a field it lacks keeps the earlier value.
    static func merge(_ later: Location, into epoch: inout Epoch) {
        // In place, field by field: no copy of the whole fix.
        epoch.fix.latitude = later.latitude
        epoch.fix.longitude = later.longitude
        epoch.fix.mode = later.mode
        if let value = later.altitude { epoch.fix.altitude = value }
        if let value = later.ellipsoidalAltitude { epoch.fix.ellipsoidalAltitude = value }
        if let value = later.horizontalAccuracy { epoch.fix.horizontalAccuracy = value }
        if let value = later.verticalAccuracy { epoch.fix.verticalAccuracy = value }
        if let value = later.speed { epoch.fix.speed = value }
        if let value = later.speedAccuracy { epoch.fix.speedAccuracy = value }
        if let value = later.course { epoch.fix.course = value }
        if let value = later.courseAccuracy { epoch.fix.courseAccuracy = value }
        if let value = later.climb { epoch.fix.climb = value }
        if let value = later.fixStatus { epoch.fix.fixStatus = value }
        if let value = later.satellitesUsed { epoch.fix.satellitesUsed = value }
        if let value = later.hdop { epoch.fix.hdop = value }
        // `receivedAt` stays the first TPV's, like the epoch's receipt instant.
        epoch.reports += 1
    }
}
