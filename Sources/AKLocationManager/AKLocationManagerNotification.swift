/// What `locationManager(_:didGetNotification:)` reports: the seed's nine
/// notifications and aklocd's own lifecycle ones (docs/protocol.md §6). The
/// raw value is the wire name.
public enum AKLocationManagerNotification: String, Hashable, Sendable, CaseIterable {
    /// Updates were started while not authorized (`notDetermined` or `denied`).
    case locationManagerNotAuthorized
    /// `requestForUpdatingLocation` was answered with deny.
    case userAuthorizationDenied
    /// `requestForUpdatingLocation` was answered with always.
    case userAuthorizedAlways
    /// `requestForUpdatingLocation` was answered with when-in-use.
    case userAuthorizedWhenInUse
    /// The status became denied.
    case authorizationDenied
    /// The status became authorized always.
    case authorizedAlways
    /// The status became authorized when in use.
    case authorizedWhenInUse
    /// The user's login session went inactive: a when-in-use client gets no fixes.
    case appInBackground
    /// The session is active again.
    case appActive
    /// An admin paused aklocd.
    case paused
    /// An admin resumed aklocd.
    case resumed
    /// aklocd's connection to gpsd came (back) up.
    case sourceConnected
    /// aklocd lost gpsd.
    case sourceDisconnected
    /// aklocd is shutting down; the manager reconnects when it is back.
    case daemonStopping
}
