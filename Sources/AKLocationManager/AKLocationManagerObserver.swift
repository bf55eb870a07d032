/// Stands in for KVO's `observeValue(forKeyPath:of:change:context:)`: what
/// `addObserver(_:forKeyPath:)` takes. Called on the manager's `callbackQueue`.
public protocol AKLocationManagerObserver: AnyObject {
    func observeValue(forKeyPath keyPath: String, of manager: AKLocationManager, change: AKLocationManagerChange)
}
