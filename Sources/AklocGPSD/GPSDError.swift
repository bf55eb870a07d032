import AklocCore

/// Why the gpsd connection failed or was dropped.
public typealias GPSDError = CodedError<GPSDErrorCode>

/// The stable codes of `GPSDError`.
public enum GPSDErrorCode: String, CodedErrorCode {
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
