import AklocCore

/// The authorization `requestForUpdatingLocation(_:)` asks aklocd for (the
/// seed's `.WhenInUse` / `.Always`, in Swift 3+ spelling).
public enum AKLocationManagerRequestType: String, Hashable, Sendable, CaseIterable {
    /// As `requestWhenInUseAuthorization()`: fixes while the user's login session is active.
    case whenInUse
    /// As `requestAlwaysAuthorization()`: fixes regardless of the session.
    case always

    var wire: AuthorizationRequestType {
        switch self {
        case .whenInUse: .whenInUse
        case .always: .always
        }
    }
}
