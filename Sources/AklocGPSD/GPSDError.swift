/// Why the gpsd connection failed or was dropped. `code` is stable (logs,
/// `status`); `message` is for humans.
public struct GPSDError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable {
        /// gps_open failed: nothing listening, name not resolvable, ...
        case connectFailed
        /// Sending ?WATCH failed.
        case streamFailed
        /// gpsd closed the connection (EOF).
        case closedByPeer
        /// recv failed (reset, ...).
        case readFailed
        /// A line that is not a JSON object from gpsd: garbage, truncated
        /// JSON, invalid UTF-8, an embedded NUL.
        case protocolError
        /// A line longer than libgps's 20 KiB buffer.
        case lineTooLong
        /// Connected, but no VERSION banner arrived in time: not a gpsd.
        case handshakeTimeout
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
