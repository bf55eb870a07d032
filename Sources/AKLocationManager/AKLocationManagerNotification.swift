import AklocCore

/// What `locationManager(_:didGetNotification:)` reports: the seed's nine
/// notifications (`locationManagerNotAuthorized`, `userAuthorizationDenied`,
/// `userAuthorizedAlways`, `userAuthorizedWhenInUse`, `authorizationDenied`,
/// `authorizedAlways`, `authorizedWhenInUse`, `appInBackground`, `appActive`)
/// and aklocd's own (`paused`, `resumed`, `sourceConnected`,
/// `sourceDisconnected`, `daemonStopping`). The raw value is the wire name
/// (docs/protocol.md §6). The vocabulary is the engine's, so the two cannot drift.
public typealias AKLocationManagerNotification = AklocCore.Notification
