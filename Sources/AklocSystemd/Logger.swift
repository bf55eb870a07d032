import AklocCore
import AklocPosix
import CSystemd
import Glibc

/// Leveled logging to journald (with structured fields) or to a stream.
///
/// Immutable after creation, so it is `Sendable` without locks and can be
/// copied into any queue or task. Each record is a single `write(2)` or a
/// single `sd_journal_sendv(3)`, so records from different threads never
/// interleave.
public struct Logger: Sendable {
    public typealias Level = LogLevel

    public enum Destination: Hashable, Sendable {
        /// journald; records it refuses with an error go to `fallback`.
        case journal(fallback: Int32)
        /// "level: message key=value ..." lines on a descriptor.
        case stream(Int32)
    }

    public let minimumLevel: Level
    public let destination: Destination
    /// journald's `SYSLOG_IDENTIFIER=`.
    public let identifier: String

    public init(minimumLevel: Level = .info, destination: Destination = .stream(2), identifier: String = "aklocd") {
        self.minimumLevel = minimumLevel
        self.destination = destination
        self.identifier = identifier
    }

    /// journald when `JOURNAL_STREAM` names this process's stderr (systemd
    /// connected it to the journal), else stderr lines. Checking the device
    /// and inode, not just the variable's presence, matters: a child of a
    /// service inherits the variable even when its stderr was redirected.
    public static func standard(minimumLevel: Level = .info, identifier: String = "aklocd") -> Logger {
        let journalStream = getenv("JOURNAL_STREAM").map { String(cString: $0) }
        return Logger(
            minimumLevel: minimumLevel,
            destination: destination(journalStream: journalStream, fd: STDERR_FILENO),
            identifier: identifier)
    }

    /// libsystemd drops records silently when journald's socket is missing,
    /// so the journal is chosen only when that socket exists too.
    static func destination(
        journalStream: String?, fd: Int32, journalSocket: String = "/run/systemd/journal/socket"
    ) -> Destination {
        guard journalStreamMatches(journalStream, fd: fd), FileSystem.isWritable(journalSocket) else {
            return .stream(fd)
        }
        return .journal(fallback: fd)
    }

    /// Whether a `JOURNAL_STREAM` value ("device:inode") names `fd`.
    public static func journalStreamMatches(_ value: String?, fd: Int32) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        guard let info = try? FileSystem.status(of: fd) else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    public var isJournal: Bool {
        if case .journal = destination { return true }
        return false
    }

    public func isEnabled(_ level: Level) -> Bool { level >= minimumLevel }

    /// Logs `message` with structured fields. Field names are journald-style
    /// (`AKLOC_CLIENT_UID`); on a stream they are shown shortened
    /// (`client_uid=1000`). The message is only built when `level` is enabled.
    public func log(_ level: Level, _ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:])
    {
        guard isEnabled(level) else { return }
        emit(level, message(), fields.map { ($0.key, $0.value) })
    }

    /// `log(_:_:_:)` for fields built at run time.
    public func log(_ level: Level, _ message: @autoclosure () -> String, fields: [(String, String)]) {
        guard isEnabled(level) else { return }
        emit(level, message(), fields)
    }

    public func debug(_ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard isEnabled(.debug) else { return }
        emit(.debug, message(), fields.map { ($0.key, $0.value) })
    }

    public func info(_ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard isEnabled(.info) else { return }
        emit(.info, message(), fields.map { ($0.key, $0.value) })
    }

    public func notice(_ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard isEnabled(.notice) else { return }
        emit(.notice, message(), fields.map { ($0.key, $0.value) })
    }

    public func warning(_ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard isEnabled(.warning) else { return }
        emit(.warning, message(), fields.map { ($0.key, $0.value) })
    }

    public func error(_ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard isEnabled(.error) else { return }
        emit(.error, message(), fields.map { ($0.key, $0.value) })
    }

    private func emit(_ level: Level, _ message: String, _ fields: [(String, String)]) {
        switch destination {
        case .journal(let fallback):
            if !sendToJournal(level, message, fields) {
                writeLine(level, message, fields, to: fallback)
            }
        case .stream(let fd):
            writeLine(level, message, fields, to: fd)
        }
    }

    private func sendToJournal(_ level: Level, _ message: String, _ fields: [(String, String)]) -> Bool {
        var entries = [
            "MESSAGE=\(message)", "PRIORITY=\(level.syslogPriority)", "SYSLOG_IDENTIFIER=\(identifier)",
        ]
        for (name, value) in fields {
            guard let name = Self.journalFieldName(name) else { continue }
            entries.append("\(name)=\(value)")
        }
        // One buffer and iovecs into it: sd_journal_sendv copes with newlines
        // in values (it switches to journald's binary field format).
        var buffer: [UInt8] = []
        var ranges: [Range<Int>] = []
        for entry in entries {
            let start = buffer.count
            buffer += entry.utf8
            ranges.append(start..<buffer.count)
        }
        let result = buffer.withUnsafeMutableBytes { raw -> Int32 in
            let vectors = ranges.map { iovec(iov_base: raw.baseAddress! + $0.lowerBound, iov_len: $0.count) }
            return vectors.withUnsafeBufferPointer { sd_journal_sendv($0.baseAddress!, Int32($0.count)) }
        }
        return result >= 0
    }

    /// journald accepts field names of A-Z, 0-9 and `_`, at most 64 bytes,
    /// not starting with a digit or `_` (those are trusted, set by journald
    /// itself). The fixed fields cannot be overridden by a caller.
    static func journalFieldName(_ name: String) -> String? {
        let upper = name.uppercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" }
        let result = String(upper.prefix(64))
        guard let first = result.first, first.isLetter,
            !["MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER"].contains(result)
        else { return nil }
        return result
    }

    private func writeLine(_ level: Level, _ message: String, _ fields: [(String, String)], to fd: Int32) {
        let line = Self.formatLine(level, message, fields)
        // Nothing sensible is left to do if stderr itself fails.
        _ = try? Syscall.writeAll(fd, Array(line.utf8))
    }

    /// `"warning: gpsd connection lost source=gpsd://127.0.0.1:2947\n"`.
    static func formatLine(_ level: Level, _ message: String, _ fields: [(String, String)]) -> String {
        var line = "\(level.name): \(escape(message))"
        for (name, value) in fields {
            line += " \(streamFieldName(name))=\(quoteIfNeeded(value))"
        }
        return line + "\n"
    }

    /// `AKLOC_CLIENT_UID` reads as `client_uid` in a terminal.
    static func streamFieldName(_ name: String) -> String {
        let short = name.hasPrefix("AKLOC_") ? String(name.dropFirst(6)) : name
        return short.lowercased()
    }

    /// Keeps each record on one line: control characters become escapes.
    static func escape(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\\": result += "\\\\"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    result += "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    static func quoteIfNeeded(_ value: String) -> String {
        let plain =
            !value.isEmpty
            && !value.unicodeScalars.contains {
                $0 == " " || $0 == "\"" || $0 == "=" || $0.value < 0x20 || $0.value == 0x7F
            }
        if plain { return escape(value) }
        return "\"" + escape(value).replacing("\"", with: "\\\"") + "\""
    }
}

extension LogLevel {
    /// syslog(3) priority, journald's `PRIORITY=`.
    public var syslogPriority: Int32 {
        switch self {
        case .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        }
    }
}
