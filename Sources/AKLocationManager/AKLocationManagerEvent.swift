import AklocJSON
import AklocProtocol

/// Everything the manager reports, as one value: what the delegate and the
/// observers get, for `events` (Swift concurrency).
public enum AKLocationManagerEvent: Hashable, Sendable {
    case didGetFirstLocation(CLLocation)
    /// `afterTimeInterval` is the real time since the previous delivery for a
    /// throttled update, nil for an every-epoch update or a `requestLocation()` answer.
    case didUpdateLocation(CLLocation, afterTimeInterval: Double?)
    case didGetError(AKLocationManagerError)
    case didGetNotification(AKLocationManagerNotification)
    /// An observed key path changed (`addObserver(_:forKeyPath:)`).
    case didChange(AKLocationManagerChange)
    /// A visit began (no `departure`) or ended (the same visit, same
    /// `arrival`, with its `departure`), after `startMonitoringVisits()`.
    case didVisit(CLVisit)
    case connectionStateChanged(AKLocationManagerConnectionState)
}

/// One change of an observed key path: KVO's change dictionary as a value.
public struct AKLocationManagerChange: Hashable, Sendable {
    /// As given to `addObserver(_:forKeyPath:)`, e.g. `myLocation` or `myLocation.speed`.
    public var keyPath: String
    /// The new value as aklocd sent it (`null` before the first fix).
    public var new: JSONValue
    /// The previous value, when aklocd sent one.
    public var old: JSONValue?

    public init(keyPath: String, new: JSONValue, old: JSONValue?) {
        self.keyPath = keyPath
        self.new = new
        self.old = old
    }

    /// `new` as a location, for `myLocation` and `rawLocation`.
    public var newLocation: CLLocation? { CLLocation(json: new) }
    /// `old` as a location.
    public var oldLocation: CLLocation? { old.flatMap(CLLocation.init(json:)) }
    /// `new` as a visit, for the `visit` key path (nil between visits).
    public var newVisit: CLVisit? { try? CLVisit(json: new) }
}
