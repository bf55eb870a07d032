/// What went wrong in the forwarder. `code` is stable (logs and tests match
/// on it); `message` says what in words.
public struct MQTTError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable {
        /// The queue journal could not be read or created.
        case journalUnreadable
        /// Appending to or compacting the journal failed (disk full, EIO).
        case journalWriteFailed
        /// `password-file` could not be read.
        case passwordFileUnreadable
        /// libmosquitto refused a setting (TLS files, credentials, will).
        case setupFailed
        /// The TCP/TLS connection could not be started.
        case connectFailed
        /// The broker answered CONNACK with a refusal (bad credentials, ...).
        case connectionRefused
        /// An established connection was lost.
        case connectionLost
        /// `mosquitto_publish` refused a message.
        case publishFailed
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(message) [\(code.rawValue)]" }
}
