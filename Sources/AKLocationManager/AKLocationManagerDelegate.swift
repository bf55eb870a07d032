/// The seed's delegate. Every method has an empty default, as the
/// Objective-C protocol's were optional; implement the ones you need. All
/// are called on the manager's `callbackQueue` (main by default).
public protocol AKLocationManagerDelegate: AnyObject {
    /// The first location after `startUpdatingLocation()` (and after aklocd
    /// resumes, gets its source back, or the manager reconnects).
    func locationManager(_ manager: AKLocationManager, didGetFirstLocation location: CLLocation)
    /// A location without throttling: each epoch when `deliversEveryEpoch`
    /// is set, and the answer to `requestLocation()`.
    func locationManager(_ manager: AKLocationManager, didUpdateLocation location: CLLocation)
    /// A throttled update; `timeInterval` is the real time since the previous one.
    func locationManager(
        _ manager: AKLocationManager, didUpdateLocation location: CLLocation, afterTimeInterval timeInterval: Double)
    func locationManager(_ manager: AKLocationManager, didGetError error: AKLocationManagerError)
    func locationManager(_ manager: AKLocationManager, didGetNotification notification: AKLocationManagerNotification)
    /// Not in the seed: a visit began (`departure` nil) or ended (the same
    /// visit, same `arrival`, with its `departure`), after `startMonitoringVisits()`.
    func locationManager(_ manager: AKLocationManager, didVisit visit: CLVisit)
    /// Not in the seed: the link to aklocd changed.
    func locationManager(
        _ manager: AKLocationManager, didChangeConnectionState state: AKLocationManagerConnectionState)
}

extension AKLocationManagerDelegate {
    public func locationManager(_ manager: AKLocationManager, didGetFirstLocation location: CLLocation) {}
    public func locationManager(_ manager: AKLocationManager, didUpdateLocation location: CLLocation) {}
    public func locationManager(
        _ manager: AKLocationManager, didUpdateLocation location: CLLocation, afterTimeInterval timeInterval: Double
    ) {}
    public func locationManager(_ manager: AKLocationManager, didGetError error: AKLocationManagerError) {}
    public func locationManager(
        _ manager: AKLocationManager, didGetNotification notification: AKLocationManagerNotification
    ) {}
    public func locationManager(_ manager: AKLocationManager, didVisit visit: CLVisit) {}
    public func locationManager(
        _ manager: AKLocationManager, didChangeConnectionState state: AKLocationManagerConnectionState
    ) {}
}
