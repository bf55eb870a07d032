import CBench

#if canImport(Glibc)
    import Glibc
#endif

/// The one reader process: every socket of a run (the reference gpsd client,
/// direct gpsd clients, akloc subscribers, floor subscribers) in one epoll set
/// on one thread. Each wake-up of `epoll_wait` (which reports every ready
/// socket at once, up to 32 768) is stamped once with
/// CLOCK_MONOTONIC and that stamp is the receive time of every line read in
/// that batch, so all kinds are measured by the same clock and the same code.
final class Reader {
    enum Kind: Int, CaseIterable {
        case reference, gpsd, akloc, floor
    }

    private struct Connection {
        var fd: Int32
        var kind: Kind
        var partial: [UInt8] = []
        var lastEpoch = -1
        var sawData = false
        var replies = 0
        var open = true
    }

    private let epoll: Int32
    private var connections: [Connection] = []
    private var buffer = [UInt8](repeating: 0, count: 65_536)
    private var tokens = [UInt64](repeating: 0, count: Int(CBENCH_MAX_EVENTS))

    /// Fix time string -> epoch index; first reference arrival of each epoch.
    private var epochIndex: [String: Int] = [:]
    private(set) var referenceArrival: [Int64] = []
    /// Kernel receive time (SO_TIMESTAMPNS, made monotonic) of each epoch's first reference TPV.
    private(set) var referenceKernel: [Int64] = []
    /// Kernel receive time of each epoch's last reference TPV that changed any field of the fix
    /// akloc delivers (`fixKeys`): from then on a direct client has the same fix.
    private(set) var referenceSameFix: [Int64] = []
    /// The fix fields of each epoch's latest reference TPV, to see which TPV changed them.
    private var referenceFix: [[[UInt8]?]] = []
    /// Per kind: (epoch, receive time) of the first line of each epoch on each socket.
    private(set) var arrivals: [[(epoch: Int, nanos: Int64)]] = Array(repeating: [], count: Kind.allCases.count)
    private(set) var refusedCount = 0
    private var lastKernelStamp: Int64 = -1
    private(set) var errorLines: [String] = []

    init() {
        epoll = cbench_epoll_create()
        precondition(epoll >= 0, "epoll_create1 failed")
    }

    deinit {
        closeAll()
        close(epoll)
    }

    func count(_ kind: Kind) -> Int { connections.reduce(0) { $0 + ($1.kind == kind && $1.open ? 1 : 0) } }

    /// Adds a connected descriptor; `greeting` is written first (blocking).
    @discardableResult
    func add(fd: Int32, kind: Kind, greeting: String? = nil) -> Bool {
        if let greeting, !Posix.writeAll(fd, greeting) {
            close(fd)
            return false
        }
        Posix.setNonBlocking(fd)
        guard cbench_epoll_add(epoll, fd, UInt64(connections.count)) == 0 else {
            close(fd)
            return false
        }
        if kind == .reference { cbench_enable_timestamps(fd) }
        connections.append(Connection(fd: fd, kind: kind))
        return true
    }

    /// Connects one direct gpsd client and waits (bounded) for gpsd's first
    /// line or its close: gpsd accepts and at once closes a client over its
    /// limit. Returns whether gpsd kept it.
    func addGPSDClient(port: UInt16, kind: Kind) -> Bool {
        guard let fd = Posix.connectLoopback(port: port) else {
            refusedCount += 1
            return false
        }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        var first = [UInt8](repeating: 0, count: 4096)
        let ready = poll(&poller, 1, 2000)
        let count = ready > 0 ? read(fd, &first, first.count) : 0
        guard count > 0 else {
            close(fd)
            refusedCount += 1
            return false
        }
        return add(fd: fd, kind: kind, greeting: "?WATCH={\"enable\":true,\"json\":true};\n")
    }

    /// Reads until `done` says so or `timeout` seconds pass; false on timeout.
    @discardableResult
    func run(timeout: Double, until done: () -> Bool) -> Bool {
        let deadline = Posix.monotonicNanos() + Int64(timeout * 1e9)
        while !done() {
            if Posix.monotonicNanos() > deadline { return false }
            pollOnce(milliseconds: 50)
        }
        return true
    }

    /// Every akloc or floor subscriber has had its reply (akloc) or greeting (floor).
    var subscribersReady: Bool {
        connections.allSatisfy { connection in
            !connection.open || connection.kind == .reference || connection.kind == .gpsd
                || (connection.kind == .akloc ? connection.replies > 0 : connection.sawData)
        }
    }

    private func pollOnce(milliseconds: Int32) {
        let ready = tokens.withUnsafeMutableBufferPointer {
            cbench_epoll_wait(epoll, $0.baseAddress, Int32($0.count), milliseconds)
        }
        guard ready > 0 else { return }
        let now = Posix.monotonicNanos()
        for slot in 0..<Int(ready) {
            readOnce(Int(tokens[slot]), at: now)
        }
    }

    private func readOnce(_ index: Int, at now: Int64) {
        guard connections[index].open else { return }
        let fd = connections[index].fd
        var kernel: Int64 = -1
        let count =
            connections[index].kind == .reference
            ? buffer.withUnsafeMutableBytes { cbench_recv_timestamped(fd, $0.baseAddress, UInt($0.count), &kernel) }
            : buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        lastKernelStamp = kernel
        if count < 0, errno == EAGAIN || errno == EINTR { return }
        if count <= 0 {
            if !connections[index].sawData { refusedCount += 1 }
            connections[index].open = false
            cbench_epoll_remove(epoll, fd)
            close(fd)
            return
        }
        connections[index].sawData = true
        var start = 0
        for position in 0..<count where buffer[position] == UInt8(ascii: "\n") {
            if connections[index].partial.isEmpty {
                line(buffer[start..<position], of: index, at: now)
            } else {
                connections[index].partial += buffer[start..<position]
                let whole = connections[index].partial
                connections[index].partial.removeAll(keepingCapacity: true)
                line(whole[...], of: index, at: now)
            }
            start = position + 1
        }
        if start < count { connections[index].partial += buffer[start..<count] }
    }

    private static let tpvPrefix = Array("{\"class\":\"TPV\"".utf8)
    private static let timeKey = Array("\"time\":\"".utf8)
    private static let timestampKey = Array("\"timestamp\":\"".utf8)
    private static let okTrue = Array("\"ok\":true".utf8)
    private static let okFalse = Array("\"ok\":false".utf8)

    private func line(_ bytes: ArraySlice<UInt8>, of index: Int, at now: Int64) {
        let kind = connections[index].kind
        let time: ArraySlice<UInt8>?
        switch kind {
        case .reference, .gpsd, .floor:
            guard bytes.starts(with: Reader.tpvPrefix) else { return }
            time = Reader.value(after: Reader.timeKey, in: bytes)
        case .akloc:
            time = Reader.value(after: Reader.timestampKey, in: bytes)
            if time == nil {
                if Reader.find(Reader.okTrue, in: bytes) != nil {
                    connections[index].replies += 1
                } else if Reader.find(Reader.okFalse, in: bytes) != nil, errorLines.count < 5 {
                    errorLines.append(String(decoding: bytes, as: UTF8.self))
                }
            }
        }
        guard let time else { return }
        let key = String(decoding: time, as: UTF8.self)
        let epoch: Int
        if let known = epochIndex[key] {
            epoch = known
        } else {
            epoch = referenceArrival.count
            epochIndex[key] = epoch
            referenceArrival.append(-1)
            referenceKernel.append(-1)
            referenceSameFix.append(-1)
            referenceFix.append([])
        }
        if kind == .reference {
            // The stamp is the last segment's of this read: never earlier than this line's.
            let stamp = lastKernelStamp > 0 && lastKernelStamp <= now ? lastKernelStamp : now
            if referenceArrival[epoch] < 0 {
                referenceArrival[epoch] = now
                referenceKernel[epoch] = stamp
            }
            // Copied out: a slice would keep the read buffer shared, and the next read would copy it.
            let fix = Reader.fixKeys.map { Reader.number(after: $0, in: bytes).map { Array($0) } }
            if fix != referenceFix[epoch] {
                referenceFix[epoch] = fix
                referenceSameFix[epoch] = stamp
            }
            return
        }
        guard connections[index].lastEpoch != epoch else { return }
        connections[index].lastEpoch = epoch
        arrivals[kind.rawValue].append((epoch, now))
    }

    /// gpsd's names of every field of akloc's `Location` (TPVConverter): a later TPV that changes
    /// any of them changes what akloc delivers.
    private static let fixKeys = [
        "lat", "lon", "mode", "altMSL", "altHAE", "eph", "epv", "speed", "eps", "track", "epd", "climb",
    ].map { Array("\"\($0)\":".utf8) }

    /// The bytes of a number value after `key`, up to the next comma or brace.
    private static func number(after key: [UInt8], in bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let found = find(key, in: bytes) else { return nil }
        let start = found + key.count
        let end = bytes[start...].firstIndex { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "}") } ?? bytes.endIndex
        return bytes[start..<end]
    }

    private static func find(_ needle: [UInt8], in bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        var position = bytes.startIndex
        let last = bytes.endIndex - needle.count
        while position <= last {
            if bytes[position] == needle[0], bytes[position..<position + needle.count].elementsEqual(needle) {
                return position
            }
            position += 1
        }
        return nil
    }

    private static func value(after key: [UInt8], in bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let found = find(key, in: bytes) else { return nil }
        let start = found + key.count
        guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return bytes[start..<end]
    }

    /// Epochs whose first reference TPV arrived after `instant`, in order.
    func epochs(after instant: Int64) -> [Int] {
        referenceArrival.indices.filter { referenceArrival[$0] > instant }
    }

    /// Added latency (ns) of every first arrival of `kind` for the given epochs:
    /// the reader's receive time minus the kernel's receive time of the reference TPV.
    func latencies(_ kind: Kind, epochs: Set<Int>) -> [Int64] {
        arrivals[kind.rawValue].compactMap { arrival in
            guard epochs.contains(arrival.epoch) else { return nil }
            return arrival.nanos - referenceKernel[arrival.epoch]
        }
    }

    /// Added latency (ns) of `kind`'s first arrivals measured from the reference TPV from which a
    /// direct client has the fix akloc delivers, instead of the epoch's first TPV (akloc delivers
    /// the merged epoch; see docs/semantics.md, "Epochs").
    func latenciesFromSameFix(_ kind: Kind, epochs: Set<Int>) -> [Int64] {
        arrivals[kind.rawValue].compactMap { arrival in
            guard epochs.contains(arrival.epoch), referenceSameFix[arrival.epoch] > 0 else { return nil }
            return arrival.nanos - referenceSameFix[arrival.epoch]
        }
    }

    /// How late the reader saw each reference TPV after the kernel received it (ns).
    func readerLag(epochs: Set<Int>) -> [Int64] {
        epochs.map { referenceArrival[$0] - referenceKernel[$0] }
    }

    func closeAll() {
        for index in connections.indices where connections[index].open {
            connections[index].open = false
            close(connections[index].fd)
        }
    }
}
