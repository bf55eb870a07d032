/// How much a log record matters. One type for every module that logs (the
/// gpsd source and the MQTT forwarder hand records to the daemon's logger),
/// so no module maps one level enum onto another.
public enum LogLevel: Int, Comparable, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case debug
    case info
    case notice
    case warning
    case error

    /// Parses a `--log-level` value: `debug`, `info`, `notice`, `warning`
    /// (or `warn`), `error` (or `err`).
    public init?(name: String) {
        switch name.lowercased() {
        case "debug": self = .debug
        case "info": self = .info
        case "notice": self = .notice
        case "warning", "warn": self = .warning
        case "error", "err": self = .error
        default: return nil
        }
    }

    public var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        }
    }

    public var description: String { name }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
