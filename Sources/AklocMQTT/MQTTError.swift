import AklocCore

/// What went wrong in the forwarder.
public typealias MQTTError = CodedError<MQTTErrorCode>

/// The stable codes of `MQTTError`.
public enum MQTTErrorCode: String, CodedErrorCode {
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
    /// The broker does not speak the MQTT version offered (CONNACK 0x84 in
    /// MQTT 5, 1 in 3.1.1).
    case unsupportedProtocol
    /// An established connection was lost.
    case connectionLost
    /// `mosquitto_publish` refused a message.
    case publishFailed
}
