import AklocCore
import AklocPosix
import Dispatch

/// `[geoclue] nmea-socket`: a Unix socket where each reader gets one GGA and
/// one RMC sentence per epoch (`NMEASentences`), which is what GeoClue
/// 2.6+'s `nmea-socket=` source reads.
///
/// A reader that cannot take an epoch whole keeps the rest queued and skips
/// the epochs that come meanwhile, so each reader holds at most one epoch
/// and always sees whole sentences. What a reader sends is read and dropped.
/// Accepting and writing are the `StreamServer`'s and `BufferedStream`'s.
public final class NMEAFeed: Component {
    public let name = "NMEA feed"
    /// Called when the first reader arrives (true) and the last leaves (false).
    public var readersChanged: (Bool) -> Void = { _ in }
    private let path: String
    private let mode: UInt32
    private let queue: DispatchQueue
    private let log: (LogLevel, String) -> Void
    private let clock: any ShellClock
    private var acceptor: StreamServer<UnixListeningSocket>?
    private var readers: [Int: BufferedStream] = [:]
    private var nextReader = 0

    public init(
        path: String, mode: UInt32, queue: DispatchQueue, clock: any ShellClock,
        log: @escaping (LogLevel, String) -> Void
    ) {
        self.path = path
        self.mode = mode
        self.queue = queue
        self.clock = clock
        self.log = log
    }

    public var readerCount: Int { readers.count }

    public func start() throws(ComponentError) {
        let listener: UnixListeningSocket
        do {
            listener = try UnixListeningSocket.listen(path: path, mode: mode, backlog: 64)
        } catch {
            throw ComponentError(.cannotListen, component: name, "\(error)")
        }
        let acceptor = StreamServer(
            listener: listener, queue: queue, clock: clock,
            acceptFailed: { [weak self] error in
                self?.log(
                    .warning, "NMEA feed: accept failed (\(error)); not accepting until a reader leaves or for 1 s")
            },
            accepted: { [weak self] stream, _ in self?.add(stream) })
        self.acceptor = acceptor
        acceptor.start()
        log(.notice, "serving NMEA on \(path)")
    }

    public func stop() {
        for var reader in readers.values { reader.close() }
        readers.removeAll()
        // Stopping the server closes the listener, which removes its file.
        acceptor?.stop()
        acceptor = nil
    }

    private func add(_ stream: BufferedStream) {
        let wasEmpty = readers.isEmpty
        let key = nextReader
        nextReader += 1
        readers[key] = stream
        stream.watchReadable(on: queue) { [weak self] in self?.drain(key) }
        if wasEmpty { readersChanged(true) }
    }

    /// Reads and drops what a reader sends; its end of file closes it.
    private func drain(_ key: Int) {
        guard let stream = readers[key] else { return }
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            let result = try? buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
            switch result {
            case .bytes?: continue
            case .wouldBlock?: return
            case .endOfFile?, nil: return close(key)
            }
        }
    }

    /// One epoch to every reader that has taken the last one whole.
    public func write(_ location: Location) {
        guard !readers.isEmpty else { return }
        let bytes = Array(NMEASentences.epoch(location).utf8)
        for key in Array(readers.keys) where readers[key]?.isDrained == true {
            let sent = readers[key]?.send(bytes, waitingOn: queue, { [weak self] in self?.writable(key) })
            switch sent {
            case .written?, .queued?, .coalesced?, .overCap?, nil: break
            case .failed?, .closed?: close(key)
            }
        }
    }

    private func writable(_ key: Int) {
        if case .failed? = readers[key]?.writable() { close(key) }
    }

    private func close(_ key: Int) {
        guard var stream = readers.removeValue(forKey: key) else { return }
        stream.close()
        if readers.isEmpty { readersChanged(false) }
    }
}
