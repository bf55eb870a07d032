import AklocCore

/// Chooses which fixes pass on when gpsd serves several receivers.
///
/// By default the best current fix wins: 3D over 2D, then the smaller
/// horizontal error (unknown counts as worst). A device's fix is current for
/// `currentWindow` seconds of receipt time (monotonic, never the fix's own
/// time, which gpsd may have shifted by 1024 weeks). On a tie the device that
/// passed last keeps passing, so two equal receivers do not interleave.
/// With `pinnedDevice` set only that device passes, whatever the others say.
///
/// Every TPV of the device that passes goes on, the several gpsd sends per
/// epoch included: the engine's `EpochAssembler` is the one place that turns
/// them into one fix per epoch.
public struct DeviceSelector: Sendable {
    public var pinnedDevice: String?
    public var currentWindow: Double

    private struct Latest: Sendable {
        var location: Location
        var receivedAt: Instant
    }

    /// Each device's latest fix, by device path ("" for none). A list, not
    /// a dictionary: gpsd serves one receiver or a few, and a hash of the
    /// path plus a table store per TPV was most of this type's cost.
    private var latest: [(device: String, entry: Latest)] = []
    private var lastPassed: String?

    public init(pinnedDevice: String? = nil, currentWindow: Double = 2) {
        self.pinnedDevice = pinnedDevice
        self.currentWindow = currentWindow
    }

    /// The location if it should be delivered, nil if it is dropped.
    public mutating func offer(_ location: Location, at now: Instant) -> Location? {
        let key = location.device ?? ""
        if let pinnedDevice, pinnedDevice != key { return nil }
        // By index: iterating the list copied each whole entry.
        var found = false
        for index in latest.indices where latest[index].device == key {
            latest[index].entry = Latest(location: location, receivedAt: now)
            found = true
            break
        }
        if !found { latest.append((key, Latest(location: location, receivedAt: now))) }
        if pinnedDevice != nil { return location }
        for index in latest.indices where latest[index].device != key && isCurrent(latest[index].entry, at: now) {
            let order = DeviceSelector.compare(latest[index].entry.location, location)
            if order > 0 || (order == 0 && lastPassed == latest[index].device) { return nil }
        }
        lastPassed = key
        return location
    }

    /// Whether a no-fix report from `device` should be passed on: only when
    /// it is the pinned device, or (unpinned) no other device has a current fix.
    public mutating func offerNoFix(device: String?, at now: Instant) -> Bool {
        let key = device ?? ""
        if let pinnedDevice { return pinnedDevice == key }
        latest.removeAll { $0.device == key }
        if lastPassed == key { lastPassed = nil }
        return !latest.contains { isCurrent($0.entry, at: now) }
    }

    /// Whether a SKY report from `device` should be passed on: the pinned
    /// device's, or (unpinned) the device whose fixes pass, or any while no
    /// fix has passed yet (one receiver, before its first fix).
    public func offerSky(device: String?) -> Bool {
        let key = device ?? ""
        if let pinnedDevice { return pinnedDevice == key }
        return lastPassed == nil || lastPassed == key
    }

    /// Forgets every device, e.g. when the gpsd connection drops.
    public mutating func reset() {
        latest = []
        lastPassed = nil
    }

    private func isCurrent(_ entry: Latest, at now: Instant) -> Bool {
        now.seconds(since: entry.receivedAt) <= currentWindow
    }

    /// Positive when `a` is better than `b`, negative when worse, 0 on a tie.
    static func compare(_ a: Location, _ b: Location) -> Int {
        func rank(_ mode: Location.Mode) -> Int { mode == .threeD ? 1 : 0 }
        if rank(a.mode) != rank(b.mode) { return rank(a.mode) - rank(b.mode) }
        let errorA = a.horizontalAccuracy ?? .infinity
        let errorB = b.horizontalAccuracy ?? .infinity
        return errorA < errorB ? 1 : (errorA > errorB ? -1 : 0)
    }
}
