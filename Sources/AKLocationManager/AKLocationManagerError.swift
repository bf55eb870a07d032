/// What `locationManager(_:didGetError:)` reports and the async calls throw.
///
/// `locationManagerCantDetectFirstLocation` is the seed's; the others are
/// what talking to a daemon adds. `code` is stable; `description` is for people.
public enum AKLocationManagerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No first location after `firstLocationAttempts` attempts, one a second.
    /// Updates go on: a later first location is still reported.
    case locationManagerCantDetectFirstLocation
    /// aklocd answered a request with an error: the wire `code` (docs/protocol.md §8) and its message.
    case request(code: String, message: String)
    /// aklocd could not be reached, or the connection broke. The manager reconnects with backoff.
    case connection(String)
    /// aklocd sent something that is not the protocol (garbage, an unknown
    /// protocol version, a line cut off). The manager drops the connection and reconnects.
    case badMessage(String)
    /// A setting was rejected (e.g. a minimum interval above the maximum); the previous value is kept.
    case invalidSetting(String)

    /// A stable code: the seed's case name, the wire code for `.request`,
    /// else `connection`, `badMessage` or `invalidSetting`.
    public var code: String {
        switch self {
        case .locationManagerCantDetectFirstLocation: "locationManagerCantDetectFirstLocation"
        case .request(let code, _): code
        case .connection: "connection"
        case .badMessage: "badMessage"
        case .invalidSetting: "invalidSetting"
        }
    }

    public var description: String {
        switch self {
        case .locationManagerCantDetectFirstLocation: "\(code): no first location within the attempts"
        case .request(_, let message), .connection(let message), .badMessage(let message),
            .invalidSetting(let message):
            "\(code): \(message)"
        }
    }
}
