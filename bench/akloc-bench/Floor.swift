import CBench

#if canImport(Glibc)
    import Glibc
#endif

/// The floor (DESIGN §7): the least possible fan-out. One gpsd client and a
/// Unix socket server in one single-threaded poll loop; for the first TPV of
/// each epoch read from gpsd it write()s that line, as gpsd encoded it (about
/// the size of aklocd's event), to every connected subscriber. Nothing else:
/// no parsing beyond finding the time, no queues, no policy. Runs as its own
/// process (`akloc-bench floor PORT SOCKET`), read by the same reader as akloc.
enum Floor {
    static func main(port: UInt16, socketPath: String) -> Never {
        signal(SIGPIPE, SIG_IGN)
        guard let listener = Posix.listenUnix(socketPath) else {
            complain("floor: cannot listen on \(socketPath)")
            exit(71)
        }
        guard let gpsd = Posix.connectLoopback(port: port),
            Posix.writeAll(gpsd, "?WATCH={\"enable\":true,\"json\":true};\n")
        else {
            complain("floor: cannot reach gpsd on port \(port)")
            exit(69)
        }
        Posix.setNonBlocking(listener)
        var subscribers: [Int32] = []
        var pending: [UInt8] = []
        var lastTime: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let hello = Array("{\"class\":\"HELLO\"}\n".utf8)
        let tpv = Array("{\"class\":\"TPV\"".utf8)
        let timeKey = Array("\"time\":\"".utf8)
        var polled = [
            pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
            pollfd(fd: gpsd, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            guard poll(&polled, 2, -1) >= 0 || errno == EINTR else { exit(1) }
            if polled[0].revents != 0 {
                while true {
                    let client = cbench_accept_nonblocking(listener)
                    if client < 0 { break }
                    _ = hello.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
                    subscribers.append(client)
                }
            }
            if polled[1].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(gpsd, $0.baseAddress, $0.count) }
                if count == 0 { exit(0) }
                if count < 0 { continue }
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = pending[..<newline]
                    // gpsd sends several TPVs per epoch; like aklocd, the floor sends the first:
                    // gpsd's own line, already encoded, the same bytes to every subscriber.
                    if line.starts(with: tpv), let time = value(after: timeKey, in: line), time != lastTime[...] {
                        lastTime = Array(time)
                        pending[..<(newline + 1)].withUnsafeBytes { raw in
                            for fd in subscribers { _ = write(fd, raw.baseAddress, raw.count) }
                        }
                    }
                    pending.removeSubrange(...newline)
                }
            }
        }
    }

    /// The same fan-out with libgps as the reader (`akloc-bench libgps-floor PORT SOCKET`, in C:
    /// LibgpsFloor.c): the least CPU per epoch of any program that reads gpsd through libgps.
    static func libgpsMain(port: UInt16, socketPath: String) -> Never {
        signal(SIGPIPE, SIG_IGN)
        guard let listener = Posix.listenUnix(socketPath) else {
            complain("libgps-floor: cannot listen on \(socketPath)")
            exit(71)
        }
        Posix.setNonBlocking(listener)
        let status = cbench_libgps_floor(listener, String(port))
        if status != 0 { complain("libgps-floor: cannot reach gpsd on port \(port)") }
        exit(status)
    }

    private static func complain(_ text: String) {
        let line = Array((text + "\n").utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    private static func value(after key: [UInt8], in bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        var position = bytes.startIndex
        while position + key.count <= bytes.endIndex {
            if bytes[position..<position + key.count].elementsEqual(key) {
                let start = position + key.count
                guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                return bytes[start..<end]
            }
            position += 1
        }
        return nil
    }
}
