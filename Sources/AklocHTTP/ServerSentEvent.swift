/// The text/event-stream framing (WHATWG HTML, server-sent events): an
/// event's name and data, and the comment that keeps a quiet stream open.
public enum ServerSentEvent {
    /// `event: NAME`, one `data:` line per line of `data`, then a blank line.
    /// A line break in `data` starts a new `data:` line, so no payload can
    /// end the event early or forge another.
    public static func bytes(event name: String, data: [UInt8]) -> [UInt8] {
        var bytes = Array("event: ".utf8) + Self.singleLine(Array(name.utf8)) + [0x0A]
        for line in data.split(separator: 0x0A, omittingEmptySubsequences: false) {
            bytes += Array("data: ".utf8) + Self.singleLine(Array(line)) + [0x0A]
        }
        bytes.append(0x0A)
        return bytes
    }

    /// A comment line: browsers ignore it, and writing it finds streams
    /// whose peer vanished without a FIN.
    public static let keepAlive = Array(": keep-alive\n\n".utf8)

    /// Without carriage returns, which also end a line in the format.
    private static func singleLine(_ bytes: [UInt8]) -> [UInt8] {
        bytes.filter { $0 != 0x0D && $0 != 0x0A }
    }
}
